import NIOCore
import PushRelayCore

/// The connections the listener accepted that are still open. At a stop, each is told to finish
/// (`ChannelShouldQuiesceEvent`: an HTTP connection answers what it has read and closes, an idle one closes, a push
/// channel says goodbye with 1012), and the listener waits until all have closed.
final class OpenConnections: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var quiescing = false
        /// `waitUntilClosed` callers, offered `true` when the last connection closed.
        var whenEmpty: [FirstResult<Bool>] = []
    }

    private let state = Locked(State())

    var count: Int { state.withLock { $0.open.count } }

    /// Tracks an accepted connection until it closes. One accepted after `quiesce()` (the listener was closing) is
    /// told to finish at once.
    func accepted(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let quiescing = state.withLock { s -> Bool in
            s.open[id] = channel
            return s.quiescing
        }
        channel.closeFuture.whenComplete { [self] _ in
            let waiters = state.withLock { s -> [FirstResult<Bool>] in
                s.open[id] = nil
                guard s.open.isEmpty else { return [] }
                defer { s.whenEmpty = [] }
                return s.whenEmpty
            }
            for waiter in waiters { waiter.offer(true) }
        }
        if quiescing { Self.tellToFinish(channel) }
    }

    /// Tells every open connection to finish; returns how many there were.
    @discardableResult
    func quiesce() -> Int {
        let channels = state.withLock { s -> [any Channel] in
            s.quiescing = true
            return Array(s.open.values)
        }
        for channel in channels { Self.tellToFinish(channel) }
        return channels.count
    }

    /// Waits until every connection has closed, or `limit` on `timers` has passed; returns whether all closed.
    func waitUntilClosed(within limit: Duration, timers: any TimerScheduling) async -> Bool {
        let allClosed = FirstResult<Bool>()
        let waiting = state.withLock { s -> Bool in
            guard !s.open.isEmpty else { return false }
            s.whenEmpty.append(allClosed)
            return true
        }
        guard waiting else { return true }
        let timer = timers.schedule(after: limit) { allClosed.offer(false) }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { allClosed.start($0) }
        } onCancel: {
            allClosed.offer(false)
        }
    }

    /// Closes every connection still open, whatever it is doing.
    func closeAll() {
        for channel in state.withLock({ Array($0.open.values) }) { channel.close(promise: nil) }
    }

    private static func tellToFinish(_ channel: any Channel) {
        channel.eventLoop.execute { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
    }
}
