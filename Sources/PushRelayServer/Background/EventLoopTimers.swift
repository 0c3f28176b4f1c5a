import NIOCore
import NIOPosix
import PushRelayCore

/// Timers on NIO's event loops: the server's `TimerScheduling`. A scheduled task is an entry in a loop's timer queue,
/// where a sleeping Swift task would cost a task and a Dispatch timer per channel message.
struct EventLoopTimers: TimerScheduling {
    let group: any EventLoopGroup

    init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.group = group
    }

    @discardableResult
    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let scheduled = group.next().scheduleTask(in: TimeAmount(delay), body)
        return ScheduledTimer { scheduled.cancel() }
    }
}
