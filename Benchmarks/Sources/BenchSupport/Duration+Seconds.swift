/// A duration in seconds, as a `Double`: what the benchmarks print and divide by.
extension Duration {
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
