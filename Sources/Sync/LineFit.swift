/// A straight line `y = intercept + slope · x` fitted by least squares to the
/// points that agree with it, the others rejected as outliers.
public struct LineFit: Hashable, Sendable {
    public var slope: Double
    public var intercept: Double
    /// Indices (into the points given) used for the fit.
    public var inliers: [Int]
    /// Root mean square of the inliers' residuals.
    public var rms: Double
    /// Standard error of the slope (0 with fewer than three inliers).
    public var slopeError: Double

    public func value(at x: Double) -> Double { intercept + slope * x }

    /// Ordinary least squares over `points` (unweighted); a single point
    /// gives a flat line through it. `nil` for no points.
    public static func leastSquares(_ points: [(x: Double, y: Double)]) -> LineFit? {
        guard !points.isEmpty else { return nil }
        let n = Double(points.count)
        let mx = points.reduce(0) { $0 + $1.x } / n
        let my = points.reduce(0) { $0 + $1.y } / n
        var sxx = 0.0, sxy = 0.0
        for p in points {
            sxx += (p.x - mx) * (p.x - mx)
            sxy += (p.x - mx) * (p.y - my)
        }
        let slope = sxx > 0 ? sxy / sxx : 0
        let intercept = my - slope * mx
        var ss = 0.0
        for p in points {
            let r = p.y - (intercept + slope * p.x)
            ss += r * r
        }
        let rms = (ss / n).squareRoot()
        let slopeError = points.count > 2 && sxx > 0 ? (ss / (n - 2) / sxx).squareRoot() : 0
        return LineFit(slope: slope, intercept: intercept, inliers: Array(points.indices), rms: rms, slopeError: slopeError)
    }

    /// A line through the largest agreeing subset of `points`, then refined:
    ///
    /// 1. consensus: every line through two points (and, for one point, the
    ///    flat line through it) with |slope| ≤ `maxSlope` is scored by the
    ///    total weight of the points within `tolerance` of it; the best wins;
    /// 2. least squares on those points, then repeatedly dropping points
    ///    farther than `rejectSigmas` robust standard deviations (from the
    ///    median absolute residual, never below `floor`) and fitting again.
    ///
    /// `nil` when no point is given.
    public static func robust(_ points: [(x: Double, y: Double, weight: Double)], tolerance: Double,
                              maxSlope: Double, floor: Double, rejectSigmas: Double = 3.5) -> LineFit? {
        guard !points.isEmpty else { return nil }
        func support(slope: Double, intercept: Double) -> (weight: Double, residual: Double) {
            var w = 0.0, r = 0.0
            for p in points {
                let d = abs(p.y - (intercept + slope * p.x))
                if d <= tolerance { w += p.weight; r += d }
            }
            return (w, r)
        }
        var bestLine = (slope: 0.0, intercept: points[0].y)
        var bestScore = (weight: -1.0, residual: 0.0)
        func consider(_ slope: Double, _ intercept: Double) {
            guard abs(slope) <= maxSlope else { return }
            let s = support(slope: slope, intercept: intercept)
            if s.weight > bestScore.weight + 1e-12 || (abs(s.weight - bestScore.weight) <= 1e-12 && s.residual < bestScore.residual) {
                bestScore = s
                bestLine = (slope, intercept)
            }
        }
        for p in points { consider(0, p.y) }
        for i in points.indices {
            for j in points.indices where j > i && points[j].x != points[i].x {
                let slope = (points[j].y - points[i].y) / (points[j].x - points[i].x)
                consider(slope, points[i].y - slope * points[i].x)
            }
        }
        var members = points.indices.filter { abs(points[$0].y - (bestLine.intercept + bestLine.slope * points[$0].x)) <= tolerance }
        var fit = leastSquares(members.map { (points[$0].x, points[$0].y) })!
        for _ in 0..<20 {
            let residuals = members.map { abs(points[$0].y - fit.value(at: points[$0].x)) }
            let sigma = 1.4826 * median(residuals)
            let limit = max(rejectSigmas * sigma, floor)
            let kept = members.filter { abs(points[$0].y - fit.value(at: points[$0].x)) <= limit }
            if kept.count == members.count || kept.isEmpty { break }
            members = kept
            fit = leastSquares(members.map { (points[$0].x, points[$0].y) })!
        }
        fit.inliers = members
        return fit
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}
