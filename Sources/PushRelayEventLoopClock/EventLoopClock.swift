import Foundation
import NIOCore
import NIOPosix
import PushRelayCore

/// The time port of a running server, its engine and its provider clients: the system's wall time, `ContinuousClock`'s
/// instants, and timers in the timer queues of NIO's event loops (a scheduled timer is an entry in a loop's queue,
/// where a sleeping Swift task would cost a task and a Dispatch timer per channel message).
public struct EventLoopClock: TimePort {
    /// Where timers scheduled without a loop of their own run (`schedule(after:)`).
    public let group: any EventLoopGroup

    public init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.group = group
    }

    public func now() -> Date { Date() }

    public var instant: ContinuousClock.Instant { .now }

    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let scheduled = group.next().scheduleTask(in: TimeAmount(delay), body)
        return ScheduledTimer { scheduled.cancel() }
    }
}
