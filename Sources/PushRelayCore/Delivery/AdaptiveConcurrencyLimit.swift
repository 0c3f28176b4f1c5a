/// How many dispatches a provider may have in flight, following the queueing they see. Pure: the caller asks before
/// each dispatch (`acquire`), reports each finished one (`record`), and passes the time, in seconds on a monotonic
/// clock.
///
/// The latency of a dispatch that queued behind nothing is the provider's *unloaded latency*; this estimates it as the
/// smallest latency seen in the last `window` seconds (a windowed minimum, as TCP Vegas and BBR estimate a path's round
/// trip), a window that does not move on while dispatches are refused. The limit is judged once per *epoch*: the
/// dispatches admitted under one limit, at least `epochSamples` of them over `epochSeconds` at least, whose mean latency
/// is the epoch's latency (the epoch right after a change is not judged: it still carries the queue of the limit
/// before). The limit only moves while it refuses dispatches, that is while demand exceeds it:
/// - an epoch slower than `unloaded + max(unloaded, allowance)` shrinks the limit in proportion (at most by half), down
///   to `minimum`, so that accepted dispatches stop queueing behind each other and the rest are refused at once;
/// - but if three epochs in a row at `minimum` are still slower than three times that, the time goes elsewhere (a
///   machine saturated by other work, a provider slow for its own reasons): refusing more would only lower the
///   throughput without answering faster, so the limit returns to `maximum` and stays there for `giveUpHold` seconds;
/// - an epoch within that latency grows the limit by a quarter of its square root (one at least), up to `maximum`.
///
/// A load that never reaches the limit never moves it, however slow it gets (a busier normal is not an overload), and
/// after `recovery` seconds without a refusal the limit is back at `maximum`: a burst after an overload is not refused
/// for the overload's sake.
public struct AdaptiveConcurrencyLimit: Sendable {
    public let minimum: Int
    public let maximum: Int
    /// Queueing (seconds) tolerated above the unloaded latency even when that latency is tiny.
    public let allowance: Double
    /// How long (seconds) the unloaded latency is remembered.
    public let window: Double
    /// Seconds without a refusal after which the limit is `maximum` again.
    public let recovery: Double
    /// Seconds at `maximum`, without shrinking, after limiting down to `minimum` failed.
    public let giveUpHold: Double
    public let epochSamples: Int
    public let epochSeconds: Double
    private var limit: Int

    private var minimumNow: Double?
    private var minimumBefore: Double?
    private var windowStart: Double?
    private var lastRefusal: Double?
    private var refusedThisEpoch = false
    private var epoch: (start: Double, count: Int, total: Double)?
    private var holdUntil: Double?
    private var settling = false
    private var strikes = 0

    public init(
        minimum: Int = 8,
        maximum: Int,
        allowance: Double = 0.010,
        window: Double = 10,
        recovery: Double = 5,
        giveUpHold: Double = 10,
        epochSamples: Int = 32,
        epochSeconds: Double = 0.1
    ) {
        self.minimum = max(1, min(minimum, maximum))
        self.maximum = max(self.minimum, maximum)
        self.allowance = allowance
        self.window = window
        self.recovery = recovery
        self.giveUpHold = giveUpHold
        self.epochSamples = max(1, epochSamples)
        self.epochSeconds = epochSeconds
        self.limit = self.maximum
    }

    /// The number of dispatches allowed in flight now.
    public var current: Int { limit }

    /// The smallest latency of the last `window` seconds; nil before the first dispatch.
    public var unloadedLatency: Double? {
        switch (minimumNow, minimumBefore) {
        case (let a?, let b?): return min(a, b)
        case (let a, let b): return a ?? b
        }
    }

    /// Whether one more dispatch may start now, with `inFlight` in flight; a refusal is remembered as demand past the
    /// limit.
    public mutating func acquire(inFlight: Int, now: Double) -> Bool {
        recover(now: now)
        guard inFlight >= limit else { return true }
        lastRefusal = now
        refusedThisEpoch = true
        return false
    }

    /// A dispatch finished after `latency` seconds.
    public mutating func record(latency: Double, now: Double) {
        guard latency.isFinite, latency >= 0 else { return }
        recover(now: now)
        remember(latency, now: now)
        guard let e = epoch else {
            startEpoch(now)
            return
        }
        // Only dispatches admitted under this epoch's limit speak for it.
        guard now - latency >= e.start else { return }
        let count = e.count + 1
        let total = e.total + latency
        guard count >= epochSamples, now - e.start >= epochSeconds else {
            epoch = (e.start, count, total)
            return
        }
        if settling {
            // The epoch right after a change still carries the queue of the limit before it: not judged.
            settling = false
        } else {
            let before = limit
            judge(latency: total / Double(count), refused: refusedThisEpoch, now: now)
            settling = limit != before
        }
        startEpoch(now)
    }

    private mutating func judge(latency: Double, refused: Bool, now: Double) {
        guard refused, let unloaded = unloadedLatency else { return }
        let tolerated = unloaded + max(unloaded, allowance)
        if latency <= tolerated {
            strikes = 0
            limit = min(maximum, limit + max(1, Int(Double(limit).squareRoot() / 4)))
            return
        }
        if let until = holdUntil, now < until { return }
        guard limit > minimum else {
            // At the minimum and still far too slow, epoch after epoch: limiting is not what helps.
            strikes = latency > 3 * tolerated ? strikes + 1 : 0
            if strikes >= 3 { giveUp(now) }
            return
        }
        strikes = 0
        limit = max(minimum, Int(Double(limit) * max(0.5, tolerated / latency)))
    }

    /// Limiting did not bring the latency near what is tolerated: the time goes elsewhere (a machine saturated by other
    /// work, a provider slow for its own reasons), and refusing more would not answer faster.
    private mutating func giveUp(_ now: Double) {
        limit = maximum
        holdUntil = now + giveUpHold
        strikes = 0
    }

    private mutating func startEpoch(_ now: Double) {
        epoch = (now, 0, 0)
        refusedThisEpoch = false
    }

    private mutating func recover(now: Double) {
        if let last = lastRefusal, now - last >= recovery {
            limit = maximum
            lastRefusal = nil
            holdUntil = nil
            strikes = 0
        }
    }

    /// The windowed minimum, kept as two halves: the one filling now and the one before it. While dispatches are
    /// refused nothing is forgotten: a lasting overload queues every dispatch, and would otherwise become the unloaded
    /// latency itself. (Were the provider itself lastingly slower meanwhile, the minimum would stay far too slow, and
    /// limiting is given up.)
    private mutating func remember(_ latency: Double, now: Double) {
        let refusing = lastRefusal.map { now - $0 < 1 } ?? false
        if let start = windowStart, now - start < window / 2 || refusing {
            minimumNow = min(minimumNow ?? latency, latency)
            return
        }
        let stale = windowStart.map { now - $0 >= window } ?? true
        minimumBefore = stale ? nil : minimumNow
        minimumNow = latency
        windowStart = now
    }
}
