import Foundation

/// When pruning is due, by the wall clock: first at once, then whenever the UTC day changes or `interval` seconds have
/// passed since the last run (a clock set back counts as a change of day).
public struct PruneSchedule: Sendable {
    public let interval: TimeInterval
    private var last: Date?

    public init(interval: TimeInterval) {
        self.interval = interval
    }

    public func isDue(at now: Date) -> Bool {
        guard let last else { return true }
        return UTCDay(now) != UTCDay(last) || now.timeIntervalSince(last) >= interval || now < last
    }

    public mutating func ran(at now: Date) {
        last = now
    }
}
