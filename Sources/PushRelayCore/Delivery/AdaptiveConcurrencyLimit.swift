/// How many dispatches a provider may have in flight, adapted to the latency they see (after Netflix's gradient
/// limiter). Pure: the caller reports each finished dispatch's latency and how many were in flight.
///
/// Two moving averages of the latency are kept: a short one (the last few dozen dispatches) and a long one (the
/// baseline). While the short one stays within `tolerance` of the baseline the limit grows (by about its square
/// root per adjustment) up to `maximum`; when queueing pushes the short one above it, the limit shrinks in
/// proportion, down to `minimum`. So past the provider's and the machine's capacity, dispatches wait in a short queue
/// and the rest are refused at once, instead of all of them waiting in a long one. The baseline decays towards the
/// short average when the two stay apart, so that a lasting change of the provider's latency becomes the new normal.
public struct AdaptiveConcurrencyLimit: Sendable {
    public let minimum: Int
    public let maximum: Int
    public let tolerance: Double
    public private(set) var limit: Double
    public private(set) var shortLatency: Double?
    public private(set) var longLatency: Double?

    /// Starts at `initial` (by default `maximum`: a burst on a quiet server is never refused).
    public init(minimum: Int = 32, maximum: Int, initial: Int? = nil, tolerance: Double = 2) {
        self.minimum = max(1, min(minimum, maximum))
        self.maximum = max(self.minimum, maximum)
        self.tolerance = tolerance
        self.limit = Double(min(max(initial ?? self.maximum, self.minimum), self.maximum))
    }

    /// The whole number of dispatches allowed in flight now.
    public var current: Int { Int(limit) }

    /// A dispatch finished after `latency` seconds, with `inFlight` dispatches in flight when it started.
    public mutating func record(latency: Double, inFlight: Int) {
        guard latency.isFinite, latency >= 0 else { return }
        let short = shortLatency.map { $0 + (latency - $0) * 0.1 } ?? latency
        var long = longLatency.map { $0 + (latency - $0) * 0.01 } ?? latency
        // A baseline far below the recent latency for long: decay it, so the limit does not stay pinned down.
        if long * tolerance * 2 < short { long *= 1.02 }
        shortLatency = short
        longLatency = long
        let gradient = min(1, max(0.5, tolerance * long / max(short, 1e-6)))
        var next = limit * gradient
        // Grow only when the limit is actually used; an idle provider keeps its limit.
        if gradient >= 1, Double(inFlight) >= limit / 2 { next += limit.squareRoot() / 4 }
        limit = min(Double(maximum), max(Double(minimum), limit * 0.9 + next * 0.1))
    }
}
