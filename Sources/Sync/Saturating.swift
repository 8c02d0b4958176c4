/// Arithmetic that stops at Int64's ends instead of trapping, for counters
/// and positions fed by timestamps from files: a broken file may put
/// anything there, and the result must still be a number (that the track
/// timeline then refuses) rather than a crash.
extension Int64 {
    @inlinable func plus(_ other: Int64) -> Int64 {
        let (r, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : r
    }

    @inlinable func minus(_ other: Int64) -> Int64 {
        let (r, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : r
    }

    @inlinable func times(_ other: Int64) -> Int64 {
        let (r, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) != (other < 0) ? .min : .max) : r
    }

    @inlinable var negated: Int64 { self == .min ? .max : -self }

    /// |self|, with |Int64.min| as Int64.max.
    @inlinable var absolute: Int64 { self == .min ? .max : Swift.abs(self) }
}
