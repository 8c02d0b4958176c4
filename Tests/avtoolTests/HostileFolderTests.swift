import Foundation
import Testing

/// A run of root (or any user) writing into a folder another user controls —
/// a shared drop folder, a scratch directory — deletes nothing of anyone
/// else's, however that user arranges the folder, and whatever it swaps
/// while the run works (issue 47).
@Suite("hostile folders")
struct HostileFolderTests {
    /// Another user's ids, for `setpriv` (nobody's).
    static let other = (uid: 65534, gid: 65534)

    static func requireRoot() throws {
        guard getuid() == 0 else { try Test.cancel("needs root: another user's folder is made with chown, and that user is played with setpriv") }
        guard fileExists("/usr/bin/setpriv") else { try Test.cancel("no /usr/bin/setpriv to act as another user") }
        // (The system's Python: another user may not reach a Python installed in root's home.)
        guard fileExists("/usr/bin/python3") else { try Test.cancel("no /usr/bin/python3 to play the other user") }
    }

    /// A working directory as a killed chunked transcode of root's leaves
    /// it (the marker, then `count` chunk files), older than the sweep's second.
    static func abandonedWorkingDirectory(_ path: String, files count: Int) throws {
        try #require(mkdir(path, 0o700) == 0)
        _ = FileManager.default.createFile(atPath: path + "/.avtool-working-directory", contents: Data())
        for k in 0..<count {
            _ = FileManager.default.createFile(atPath: path + "/" + String(format: "f%05d", k), contents: Data("chunk".utf8))
        }
    }

    /// The attacker, as the folder's owner: makes `link` → `victim`, waits for
    /// the sweep to start on `work` (its time of change moves), then swaps
    /// the two names (`renameat2(RENAME_EXCHANGE)`) again and again until `stop` exists.
    static let attacker = """
        import ctypes, os, sys, time
        libc = ctypes.CDLL(None, use_errno=True)
        work, link, victim, stop = sys.argv[1:5]
        os.symlink(victim, link)
        start = os.lstat(work).st_mtime_ns
        print("ready", flush=True)
        while os.lstat(work).st_mtime_ns == start and not os.path.exists(stop):
            pass
        swaps = 0
        while not os.path.exists(stop):
            if libc.renameat2(-100, work.encode(), -100, link.encode(), 2) == 0:
                swaps += 1
            time.sleep(0.003 if swaps % 2 else 0.0005)
        print(swaps, flush=True)
        """

    /// One round: a killed run's working directory in `folder`, the attacker
    /// swapping it with a link to a directory of root's while `avtool remux`
    /// into the folder sweeps it. Returns the run, the swaps, and the victim's files left.
    static func round(folder: String, scratch: Scratch, files: Int) throws -> (run: Run, swaps: Int, victimLeft: Int, work: String, link: String) {
        let victim = scratch.path("victim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: victim, withIntermediateDirectories: false)
        for k in 0..<files {
            _ = FileManager.default.createFile(atPath: victim + "/" + String(format: "f%05d", k), contents: Data("precious".utf8))
        }
        let work = folder + "/.out.mp4.work-" + String(UUID().uuidString.prefix(6))
        let link = folder + "/link-" + UUID().uuidString
        let stop = scratch.path("stop-\(UUID().uuidString)")
        try abandonedWorkingDirectory(work, files: files)
        Thread.sleep(forTimeInterval: 1.1)

        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = ["--reuid=\(other.uid)", "--regid=\(other.gid)", "--clear-groups",
                       "/usr/bin/python3", "-c", attacker, work, link, victim, stop]
        let out = Pipe()
        p.standardOutput = out
        let err = Pipe()
        p.standardError = err
        try p.run()
        var ready = ""
        while !ready.contains("\n") {
            let piece = out.fileHandleForReading.availableData
            if piece.isEmpty { break }
            ready += String(decoding: piece, as: UTF8.self)
        }
        if !ready.hasPrefix("ready") { p.waitUntilExit() }
        try #require(ready.hasPrefix("ready"),
                     "the attacker did not start: \(ready) \(String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")

        let input = try Fixtures.wild("ios_voicememos_2021.m4a")
        var environment = ProcessInfo.processInfo.environment
        environment["AVTOOL_TEST_SWEEP_PAUSE"] = "500"
        let run = try Tool.run(Tool.avtool, ["remux", input, folder + "/out.m4a", "-y"], environment: environment)
        _ = FileManager.default.createFile(atPath: stop, contents: Data())
        let said = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        let left = (try? FileManager.default.contentsOfDirectory(atPath: victim))?.count ?? 0
        return (run, Int(said.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1, left, work, link)
    }

    /// Where the working directory is now (it may sit under either name), or nil if it was removed.
    static func workingDirectory(_ names: [String]) -> String? {
        names.first { name in
            var st = stat()
            return lstat(name, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
        }
    }

    /// A sticky folder of another user's (as /tmp is, but the user owns it):
    /// the sweep goes on there for root's own entries, through descriptors,
    /// so while the folder's owner swaps the working directory's name with a
    /// link to root's directory the sweep empties only the working directory.
    /// (Before issue 47 the files were removed by path: the victim lost them.)
    @Test func aSwappedWorkingDirectoryDeletesNothingElse() throws {
        try Self.requireRoot()
        let scratch = try Scratch()
        let folder = scratch.path("shared")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try #require(chown(folder, uid_t(Self.other.uid), gid_t(Self.other.gid)) == 0 && chmod(folder, 0o1755) == 0)
        let files = 1000
        for attempt in 1...3 {
            let r = try Self.round(folder: folder, scratch: scratch, files: files)
            #expect(r.run.status == 0, "round \(attempt): \(r.run)")
            #expect(r.swaps > 0, "round \(attempt): the attacker never swapped (the sweep did not start?)")
            #expect(r.victimLeft == files, "round \(attempt): the victim directory lost \(files - r.victimLeft) of \(files) files")
            // The working directory itself was emptied (and removed where its name still named it).
            if let left = Self.workingDirectory([r.work, r.link]) {
                #expect((try? FileManager.default.contentsOfDirectory(atPath: left))?.isEmpty == true, "round \(attempt)")
            }
        }
    }

    /// A folder another user may write into, not sticky: not swept at all
    /// (anyone may rename entries there), so the swap finds nothing to race.
    @Test func aFolderOthersMayWriteIsNotSwept() throws {
        try Self.requireRoot()
        let scratch = try Scratch()
        let folder = scratch.path("shared")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try #require(chown(folder, uid_t(Self.other.uid), gid_t(Self.other.gid)) == 0 && chmod(folder, 0o755) == 0)
        let r = try Self.round(folder: folder, scratch: scratch, files: 500)
        #expect(r.run.status == 0, "\(r.run)")
        #expect(r.victimLeft == 500, "the victim directory lost \(500 - r.victimLeft) of 500 files")
        #expect(!r.run.stderr.contains("killed runs left"), "\(r.run.stderr)")
        let left = try #require(Self.workingDirectory([r.work, r.link]))
        #expect(try FileManager.default.contentsOfDirectory(atPath: left).count == 501)
    }

    /// In our own folder, what only looks like a killed run's working
    /// directory or temporary is kept: another user's, a link, one holding a
    /// directory or a link, one without the marker. A real one is removed.
    @Test func onlyWhatThisProgramMadeIsSwept() throws {
        try Self.requireRoot()
        let scratch = try Scratch()
        let folder = scratch.path("out")
        let elsewhere = scratch.path("elsewhere")
        for d in [folder, elsewhere] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: false) }
        FileManager.default.createFile(atPath: elsewhere + "/keep", contents: Data("keep".utf8))
        let fm = FileManager.default
        try Self.abandonedWorkingDirectory(folder + "/.a.mp4.work-AAAAAA", files: 3)      // real: swept
        try Self.abandonedWorkingDirectory(folder + "/.b.mp4.work-BBBBBB", files: 3)      // another user's
        try #require(chown(folder + "/.b.mp4.work-BBBBBB", uid_t(Self.other.uid), gid_t(Self.other.gid)) == 0)
        try Self.abandonedWorkingDirectory(folder + "/.c.mp4.work-CCCCCC", files: 3)      // holds a directory
        try fm.createDirectory(atPath: folder + "/.c.mp4.work-CCCCCC/sub", withIntermediateDirectories: false)
        try Self.abandonedWorkingDirectory(folder + "/.d.mp4.work-DDDDDD", files: 3)      // holds a link
        try fm.createSymbolicLink(atPath: folder + "/.d.mp4.work-DDDDDD/keep", withDestinationPath: elsewhere + "/keep")
        try fm.createDirectory(atPath: folder + "/.e.mp4.work-EEEEEE", withIntermediateDirectories: false)  // no marker
        FileManager.default.createFile(atPath: folder + "/.e.mp4.work-EEEEEE/f", contents: Data())
        try fm.createSymbolicLink(atPath: folder + "/.f.mp4.work-FFFFFF", withDestinationPath: elsewhere)  // a link
        try fm.createSymbolicLink(atPath: folder + "/.g.mp4.avtool-GGGGGG", withDestinationPath: elsewhere + "/keep")
        FileManager.default.createFile(atPath: folder + "/.h.mp4.avtool-HHHHHH", contents: Data())          // real: swept
        Thread.sleep(forTimeInterval: 1.1)
        let r = try Tool.avtool("remux", try Fixtures.wild("ios_voicememos_2021.m4a"), folder + "/out.m4a")
        #expect(r.status == 0, "\(r)")
        let left = Set(try fm.contentsOfDirectory(atPath: folder))
        #expect(left == [".b.mp4.work-BBBBBB", ".c.mp4.work-CCCCCC", ".d.mp4.work-DDDDDD", ".e.mp4.work-EEEEEE",
                         ".f.mp4.work-FFFFFF", ".g.mp4.avtool-GGGGGG", "out.m4a"], "\(left.sorted())")
        for kept in ["b", "c", "d"] {
            let name = folder + "/.\(kept).mp4.work-\(String(repeating: kept.uppercased(), count: 6))"
            #expect(try fm.contentsOfDirectory(atPath: name).count >= 4, "\(name) was emptied")
        }
        #expect(try fm.contentsOfDirectory(atPath: elsewhere) == ["keep"])
    }

    /// `-y` over another user's file, as root: the new file is still that
    /// user's, with its mode, and they can read it (unnamed and named
    /// temporaries). Before, it became root's, mode 0640: unreadable to them.
    @Test func replacingAnotherUsersFileKeepsItsOwner() throws {
        try Self.requireRoot()
        let s = try Scratch()
        let out = s.path("theirs.m4a")
        let input = try Fixtures.wild("ios_voicememos_2021.m4a")
        for named in [false, true] {
            FileManager.default.createFile(atPath: out, contents: Data("their old file".utf8))
            try #require(chown(out, uid_t(Self.other.uid), gid_t(Self.other.gid)) == 0 && chmod(out, 0o640) == 0)
            var environment = ProcessInfo.processInfo.environment
            if named { environment["AVTOOL_NAMED_TEMPORARIES"] = "1" }
            let r = try Tool.run(Tool.avtool, ["remux", input, out, "-y", "-q"], environment: environment)
            #expect(r.status == 0, "\(r)")
            var st = stat()
            try #require(stat(out, &st) == 0)
            #expect(Int(st.st_uid) == Self.other.uid && Int(st.st_gid) == Self.other.gid, "named \(named): \(st.st_uid):\(st.st_gid)")
            #expect(st.st_mode & 0o7777 == 0o640, "named \(named)")
            let read = try Tool.run("/usr/bin/setpriv", ["--reuid=\(Self.other.uid)", "--regid=\(Self.other.gid)", "--clear-groups",
                                                         "/usr/bin/head", "-c", "8", out])
            #expect(read.status == 0, "named \(named): \(read)")
            #expect(try FFprobe(out, countPackets: true).streams.count == 1)
        }
    }

    /// A user who is not root cannot give a file back to its owner: `-y`
    /// over another user's file (root's, in a folder of the user's) is
    /// refused in one line, the file untouched, unless `--replace-others-files`
    /// (then the new file is the user's). Before: replaced with exit 0, the
    /// old owner's file now another's (issue 47). A batch step takes the option too.
    @Test func aUserDoesNotReplaceAnotherUsersFileUnasked() throws {
        try Self.requireRoot()
        let s = try Scratch()
        let folder = s.path("drop")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try #require(chown(folder, uid_t(Self.other.uid), gid_t(Self.other.gid)) == 0)
        let input = s.path("memo.m4a")
        try FileManager.default.copyItem(atPath: try Fixtures.wild("ios_voicememos_2021.m4a"), toPath: input)
        let out = folder + "/theirs.m4a"
        FileManager.default.createFile(atPath: out, contents: Data("root's old file".utf8))
        try "version: 1\nsteps:\n  - verb: remux\n    inputs: ../memo.m4a\n    output: theirs.m4a\n    options: {overwrite: true, replace-others-files: true}\n"
            .write(toFile: folder + "/r.yaml", atomically: true, encoding: .utf8)
        try #require(chown(folder + "/r.yaml", uid_t(Self.other.uid), gid_t(Self.other.gid)) == 0)
        func asOther(_ arguments: [String]) throws -> Run {
            try Tool.run("/usr/bin/setpriv", ["--reuid=\(Self.other.uid)", "--regid=\(Self.other.gid)", "--clear-groups", Tool.avtool] + arguments)
        }
        let refused = try asOther(["remux", input, out, "-y"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("another user's (uid 0)") && refused.stderr.contains("--replace-others-files"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "root's old file")
        let replaced = try asOther(["remux", input, out, "-y", "--replace-others-files", "-q"])
        #expect(replaced.status == 0, "\(replaced)")
        var st = stat()
        try #require(stat(out, &st) == 0)
        #expect(Int(st.st_uid) == Self.other.uid, "\(st.st_uid)")
        #expect(try FFprobe(out, countPackets: true).streams.count == 1)
        // The batch step's option, over root's file again.
        try #require(unlink(out) == 0)
        FileManager.default.createFile(atPath: out, contents: Data("root's old file".utf8))
        let batch = try asOther(["batch", folder + "/r.yaml", "--force", "-q"])
        #expect(batch.status == 0, "\(batch)")
        try #require(stat(out, &st) == 0)
        #expect(Int(st.st_uid) == Self.other.uid, "batch: \(st.st_uid)")
    }

    /// The output's folder swapped for a link to another directory while the
    /// run works (here: at the commit, where the run stops itself with
    /// `AVTOOL_STOP_AT=commit`): the output still goes into the folder the
    /// run opened, and the other directory's file of the same name is kept.
    /// Before: the unnamed temporary was linked by path, through the link, over
    /// that file; a named one's rename by path failed and the output was lost (issue 47).
    @Test(arguments: [false, true])
    func aFolderSwappedBeforeTheCommitSendsNothingElsewhere(named: Bool) throws {
        let s = try Scratch()
        let drop = s.path("shared/drop"), victim = s.path("victim")
        try FileManager.default.createDirectory(atPath: drop, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: victim, withIntermediateDirectories: false)
        FileManager.default.createFile(atPath: victim + "/out.m4a", contents: Data("precious".utf8))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.avtool)
        p.arguments = ["remux", try Fixtures.wild("ios_voicememos_2021.m4a"), drop + "/out.m4a", "-y", "-q"]
        var environment = ProcessInfo.processInfo.environment
        environment["AVTOOL_STOP_AT"] = "commit"
        if named { environment["AVTOOL_NAMED_TEMPORARIES"] = "1" }
        p.environment = environment
        p.standardError = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, p.isRunning, KillTests.state(p.processIdentifier) != "T" { usleep(2000) }
        try #require(KillTests.state(p.processIdentifier) == "T", "the run never reached its commit")
        try #require(rename(drop, drop + ".old") == 0 && symlink(victim, drop) == 0)
        kill(p.processIdentifier, SIGCONT)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "named \(named)")
        #expect(try String(contentsOfFile: victim + "/out.m4a", encoding: .utf8) == "precious", "named \(named)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim) == ["out.m4a"], "named \(named)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: drop + ".old") == ["out.m4a"], "named \(named)")
        #expect(try FFprobe(drop + ".old/out.m4a", countPackets: true).streams.count == 1)
    }

    /// A folder its user may write into but not list (`-wx`, a drop box):
    /// the output is made there though the folder opens for lookups only
    /// (`O_PATH`), with an unnamed temporary and with a named one.
    @Test func aFolderOneMayWriteButNotListTakesTheOutput() throws {
        try Self.requireRoot()
        let s = try Scratch()
        let box = s.path("box")
        try FileManager.default.createDirectory(atPath: box, withIntermediateDirectories: false)
        try #require(chown(box, uid_t(Self.other.uid), gid_t(Self.other.gid)) == 0 && chmod(box, 0o333) == 0)
        let input = s.path("memo.m4a")
        try FileManager.default.copyItem(atPath: try Fixtures.wild("ios_voicememos_2021.m4a"), toPath: input)
        for named in ["0", "1"] {
            let r = try Tool.run("/usr/bin/setpriv", ["--reuid=\(Self.other.uid)", "--regid=\(Self.other.gid)", "--clear-groups",
                                                      "/usr/bin/env"] + (named == "1" ? ["AVTOOL_NAMED_TEMPORARIES=1"] : ["-u", "AVTOOL_NAMED_TEMPORARIES"])
                                 + [Tool.avtool, "remux", input, box + "/out\(named).m4a", "-q"])
            #expect(r.status == 0, "named \(named): \(r)")
            #expect(try FFprobe(box + "/out\(named).m4a", countPackets: true).streams.count == 1)
        }
    }
}
