import Foundation
import PushRelayCore
import PushRelayEventLoopClock

/// The time port tests move by hand. Its wall time moves only when the test sets or advances it; its timers
/// (`.stepped`, the default) fire only when `advance` reaches them, on the caller's thread, earliest first. Give one to
/// a server, a service, an engine or a handler to step through its timeouts without sleeping; share one between a
/// provider and a fake to step through token lifetimes.
///
/// With `timers: .real` only the wall time is the test's: timers run on the event loops in real time (`EventLoopClock`),
/// for a whole server whose every deadline the test does not mean to step (`TestServer`'s default).
public final class ManualClock: TimePort, Sendable {
    /// Whether timers wait for the test (`stepped`) or run in real time (`real`).
    public enum Timers: Sendable {
        case stepped
        case real
    }

    private struct Timer {
        let id: Int
        let due: Duration
        let delay: Duration
        let body: @Sendable () -> Void
    }

    private struct State {
        var now: Date
        /// Time advanced since the clock was made: what `instant` and the stepped timers measure.
        var elapsed = Duration.zero
        var pending: [Timer] = []
        var nextID = 0
        /// The delay of every timer scheduled, in order.
        var scheduled: [Duration] = []
        /// How many of `scheduled` `nextScheduled` has handed out or passed over.
        var seen = 0
        var waiter: (matches: @Sendable (Duration) -> Bool, continuation: CheckedContinuation<Duration, Never>)?

        mutating func move(by duration: Duration) {
            elapsed += duration
            now = now.addingTimeInterval(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        }
    }

    private let state: Locked<State>
    private let origin = ContinuousClock.now
    private let realTimers: EventLoopClock?
    /// Whether timers wait for the test or run in real time.
    public let timers: Timers

    /// A clock at `start` (by default 2027-01-15T08:00:00Z).
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000), timers: Timers = .stepped) {
        state = Locked(State(now: start))
        self.timers = timers
        realTimers = timers == .real ? EventLoopClock() : nil
    }

    /// A clock at an ISO 8601 time, `2026-11-21T12:00:00Z`.
    public convenience init(_ iso: String, timers: Timers = .stepped) {
        self.init(Self.date(iso), timers: timers)
    }

    /// The `Date` of an ISO 8601 time, `2026-11-21T12:00:00Z`.
    public static func date(_ iso: String) -> Date {
        guard let date = ISO8601DateFormatter().date(from: iso) else { preconditionFailure("not an ISO 8601 time: \(iso)") }
        return date
    }

    public func now() -> Date { state.withLock { $0.now } }

    /// Moves with `advance` (not with `set`, nor with the wall clock); real with `timers: .real`.
    public var instant: ContinuousClock.Instant {
        if realTimers != nil { return .now }
        return origin + state.withLock { $0.elapsed }
    }

    /// The delays of the stepped timers scheduled and neither fired nor cancelled, earliest due first.
    public var pendingDelays: [Duration] {
        state.withLock { s in s.pending.sorted { ($0.due, $0.id) < ($1.due, $1.id) }.map(\.delay) }
    }

    /// Moves the time on by `duration`, running every stepped timer that comes due on the way, earliest first, each at
    /// its due time (`now()` and `instant` read that time while it runs) and on the caller's thread; a timer such a
    /// timer schedules runs too when it comes due within `duration`.
    public func advance(by duration: Duration) {
        let target = state.withLock { $0.elapsed + duration }
        while let timer = state.withLock({ s -> Timer? in
            guard let next = s.pending.filter({ $0.due <= target }).min(by: { ($0.due, $0.id) < ($1.due, $1.id) }) else {
                return nil
            }
            s.pending.removeAll { $0.id == next.id }
            if next.due > s.elapsed { s.move(by: next.due - s.elapsed) }
            return next
        }) {
            timer.body()
        }
        state.withLock { s in if target > s.elapsed { s.move(by: target - s.elapsed) } }
    }

    /// `advance(by:)` in seconds.
    public func advance(by seconds: TimeInterval) {
        advance(by: .milliseconds(Int64((seconds * 1000).rounded())))
    }

    /// Sets the wall time, without moving `instant` or running timers.
    public func set(_ date: Date) {
        state.withLock { $0.now = date }
    }

    /// Sets the wall time to an ISO 8601 time, without moving `instant` or running timers.
    public func set(_ iso: String) {
        set(Self.date(iso))
    }

    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledTimer {
        if let realTimers { return realTimers.schedule(after: delay, body) }
        let (id, woken) = state.withLock { s -> (Int, (CheckedContinuation<Duration, Never>, Duration)?) in
            s.nextID += 1
            s.pending.append(Timer(id: s.nextID, due: s.elapsed + delay, delay: delay, body: body))
            s.scheduled.append(delay)
            return (s.nextID, Self.match(&s))
        }
        if let (continuation, delay) = woken { continuation.resume(returning: delay) }
        return ScheduledTimer { [weak self] in
            self?.state.withLock { $0.pending.removeAll { $0.id == id } }
        }
    }

    /// The delay of the next stepped timer scheduled that `matches` it (earlier ones that do not are passed over),
    /// waiting until one is. "Next": after the one this call returned last time. One caller at a time.
    public func nextScheduled(where matches: @escaping @Sendable (Duration) -> Bool = { _ in true }) async -> Duration {
        await withCheckedContinuation { continuation in
            let found = state.withLock { s -> (CheckedContinuation<Duration, Never>, Duration)? in
                precondition(s.waiter == nil, "one waiter at a time")
                s.waiter = (matches, continuation)
                return Self.match(&s)
            }
            if let (continuation, delay) = found { continuation.resume(returning: delay) }
        }
    }

    /// The waiter and the delay it waited for, once a timer it matches has been scheduled.
    private static func match(_ s: inout State) -> (CheckedContinuation<Duration, Never>, Duration)? {
        guard let waiter = s.waiter else { return nil }
        while s.seen < s.scheduled.count {
            let delay = s.scheduled[s.seen]
            s.seen += 1
            if waiter.matches(delay) {
                s.waiter = nil
                return (waiter.continuation, delay)
            }
        }
        return nil
    }
}
