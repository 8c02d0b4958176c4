import Media

extension MediaError {
    /// The error's line as the command line shows it: options quoted with
    /// their dashes (`'--audio-bitrate'`), the remedy in terms of flags.
    var commandLineText: String { line(message: commandLineMessage, hint: hint ?? remedy?.flagText) }

    /// The message with the options it quotes spelled as flags.
    var commandLineMessage: String {
        var text = message
        // Longer names first, so 'audio' never takes the start of 'audio-bitrate'.
        for name in options.sorted(by: { $0.count > $1.count }) {
            text = text.replacingQuoted(name, with: "--" + name)
        }
        return text
    }
}

extension Remedy {
    /// The remedy in terms of avtool's flags.
    var flagText: String {
        switch self {
        case .overwrite: "pass --overwrite (-y) to replace it"
        case .drop(let k): "drop it with \(k.dropFlag)"
        case .convertOrDrop(let k): "convert it with 'avtool transcode' or drop it with \(k.dropFlag)"
        case .otherContainerOrDrop(let k): "write .mkv, which holds it, or drop it with \(k.dropFlag)"
        case .nameContainer: "write .mkv, .mp4 or .mov, or name the container with --format"
        case .repairTimestamps: "remux without --strict-timestamps to fix them"
        case .encodeAudioOrDrop: "encode it with --audio aac, or drop it with --no-audio"
        case .pcmNeedsMOV: "use a .mov output for PCM, or --audio aac"
        case .originalAudioContainer: "choose a container that holds it (mov, mkv) or leave out --keep-original-audio"
        case .checkOffset: "check --offset and --align"
        case .salvage: "'avtool repair IN OUT' or --salvage (remux, transcode) keeps every complete packet"
        case .repair: "'avtool repair IN OUT --reference GOOD' rebuilds it, GOOD being a whole recording from the same device and settings"
        case .reference: "name one with --reference: a whole recording from the same device and settings"
        case .replaceOthersFiles: "pass --replace-others-files to replace it anyway (it becomes yours), or write another output"
        case .otherContainerOrConvert(let k): "write .mkv, which holds it as it is, convert it with 'avtool transcode', or drop it with \(k.dropFlag)"
        case .mp4HoldsIt(let k): "write .mp4 or .mov, which hold it (an .m4a holds audio only), or drop it with \(k.dropFlag)"
        }
    }
}

extension StreamKind {
    /// The flag that leaves streams of this kind out.
    var dropFlag: String {
        switch self {
        case .video: "--no-video"
        case .audio: "--no-audio"
        case .subtitles: "--no-subtitles"
        case .data: "--no-data"
        case .coverArt: "--no-cover-art"
        }
    }
}

extension String {
    /// Every `'name` followed by a quote or a space, with `'replacement`.
    func replacingQuoted(_ name: String, with replacement: String) -> String {
        var out = "", rest = Substring(self)
        let needle = "'" + name
        while let r = rest.firstRange(of: needle) {
            let after = rest[r.upperBound...].first
            out += rest[..<r.lowerBound]
            out += after == "'" || after == " " ? "'" + replacement : needle
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}
