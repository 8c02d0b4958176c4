/// `v`'s low `n` bytes appended to `out`, most significant first.
package func put(_ v: UInt64, _ n: Int, _ out: inout [UInt8]) {
    for k in (0..<n).reversed() { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(k)))) }
}
