/// `v` with exactly `digits` decimals, rounded to nearest ("2.50",
/// "-0.125"), without Foundation. The one number formatter of reports and
/// messages: a value out of Int64's range, infinite or not a number (a
/// broken file can put any of them in a report) comes out in Swift's own
/// spelling, never as a trap.
public func fixed(_ v: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<max(digits, 0) { scale *= 10 }
    guard v.isFinite, abs(v) * scale < 9e18 else { return "\(v)" }
    let n = (abs(v) * scale).rounded()
    let whole = Int64(n / scale)
    var frac = String(Int64(n - Double(whole) * scale))
    while frac.count < digits { frac = "0" + frac }
    return (v < 0 && n != 0 ? "-" : "") + String(whole) + (digits > 0 ? "." + frac : "")
}
