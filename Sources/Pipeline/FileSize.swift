import Glibc

package func fileSize(_ path: String) -> Int64? {
    var st = stat()
    return stat(path, &st) == 0 ? Int64(st.st_size) : nil
}
