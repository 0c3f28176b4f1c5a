import NIOCore
import PushRelayCore

/// Timers on NIO's event loops (postgres-nio's own group by default): the engine's `TimerScheduling` unless the
/// caller passes one.
struct PostgresEventLoopTimers: TimerScheduling {
    let group: any EventLoopGroup

    @discardableResult
    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let scheduled = group.next().scheduleTask(in: TimeAmount(delay), body)
        return ScheduledTimer { scheduled.cancel() }
    }
}
