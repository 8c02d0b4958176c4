extension Duration {
    /// Whole and fractional seconds, for reports and progress.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
