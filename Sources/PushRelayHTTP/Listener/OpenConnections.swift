import NIOCore
import PushRelayCore

/// The connections the listener accepted that are still open. At a stop, each is told to finish
/// (`ChannelShouldQuiesceEvent`: an HTTP connection answers what it has read and closes, an idle one closes, a push
/// channel says goodbye with 1012), and the listener waits until all have closed.
///
/// A connection is counted as the listening socket accepts it (`handler`, in the listening channel's pipeline), before
/// it is set up on its own event loop, and is being set up until the accept loop takes it (`handedOver`). NIO closes a
/// connection whose set-up ends after its listening channel closed, so at a stop the listener first stops accepting
/// (`stopAccepting`: the handler lets no read reach the listening socket), waits until nothing is being set up
/// (`waitUntilSetUp`), and only then closes the listening channel.
final class OpenConnections: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var settingUp: Set<ObjectIdentifier> = []
        /// Connections accepted so far, to tell whether one came while the listener stopped.
        var acceptedCount = 0
        var accepting = true
        var quiescing = false
        /// `waitUntilClosed` callers, offered `true` when the last connection closed.
        var whenEmpty: [FirstResult<Bool>] = []
        /// `waitUntilSetUp` callers, offered `true` when no connection is being set up.
        var whenSetUp: [FirstResult<Bool>] = []

        mutating func setUp(_ id: ObjectIdentifier) -> [FirstResult<Bool>] {
            guard settingUp.remove(id) != nil, settingUp.isEmpty else { return [] }
            defer { whenSetUp = [] }
            return whenSetUp
        }
    }

    private let state = Locked(State())

    var count: Int { state.withLock { $0.open.count } }

    /// Tracks an accepted connection until it closes. One accepted after `quiesce()` (the listener was closing) is
    /// told to finish at once.
    func accepted(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let quiescing = state.withLock { s -> Bool in
            s.open[id] = channel
            s.settingUp.insert(id)
            s.acceptedCount += 1
            return s.quiescing
        }
        channel.closeFuture.whenComplete { [self] _ in
            let waiters = state.withLock { s -> [FirstResult<Bool>] in
                s.open[id] = nil
                var waiters = s.setUp(id)
                guard s.open.isEmpty else { return waiters }
                waiters += s.whenEmpty
                s.whenEmpty = []
                return waiters
            }
            for waiter in waiters { waiter.offer(true) }
        }
        if quiescing { Self.tellToFinish(channel) }
    }

    /// The accept loop took the connection: its set-up is over.
    func handedOver(_ channel: any Channel) {
        for waiter in state.withLock({ $0.setUp(ObjectIdentifier(channel)) }) { waiter.offer(true) }
    }

    /// Waits until no accepted connection is being set up, or `limit` on `clock` has passed; returns whether none is.
    private func waitUntilSetUp(within limit: Duration, clock: any TimePort) async -> Bool {
        let done = FirstResult<Bool>()
        let waiting = state.withLock { s -> Bool in
            guard !s.settingUp.isEmpty else { return false }
            s.whenSetUp.append(done)
            return true
        }
        guard waiting else { return true }
        return await wait(for: done, within: limit, clock: clock)
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

    /// Waits until every connection has closed, or `limit` on `clock` has passed; returns whether all closed.
    func waitUntilClosed(within limit: Duration, clock: any TimePort) async -> Bool {
        let allClosed = FirstResult<Bool>()
        let waiting = state.withLock { s -> Bool in
            guard !s.open.isEmpty else { return false }
            s.whenEmpty.append(allClosed)
            return true
        }
        guard waiting else { return true }
        return await wait(for: allClosed, within: limit, clock: clock)
    }

    private func wait(for result: FirstResult<Bool>, within limit: Duration, clock: any TimePort) async -> Bool {
        let timer = clock.schedule(after: limit) { result.offer(false) }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { result.start($0) }
        } onCancel: {
            result.offer(false)
        }
    }

    /// Closes every connection still open, whatever it is doing.
    func closeAll() {
        for channel in state.withLock({ Array($0.open.values) }) { channel.close(promise: nil) }
    }

    /// The handler of the listening channel that counts each accepted connection, first in its pipeline.
    func handler() -> some ChannelDuplexHandler { Counting(connections: self) }

    /// Accepts no more connections, and returns once every connection accepted has been set up (or `limit` on
    /// `clock` has passed): from now on no read reaches the listening socket (a read the async channel held back for
    /// its consumer included), and its interest in new connections is withdrawn on its loop (turning `autoRead` on
    /// and off, which drops a read already asked for). A connection the socket had already been woken for may still be
    /// accepted; so this waits, and looks again on the listening channel's loop, until a round brings none.
    func stopAccepting(_ server: any Channel, within limit: Duration, clock: any TimePort) async {
        state.withLock { $0.accepting = false }
        let deadline = clock.instant + limit
        while true {
            let before = state.withLock { $0.acceptedCount }
            try? await server.eventLoop.submit {
                guard let options = server.syncOptions else { return }
                try options.setOption(ChannelOptions.autoRead, value: true)
                try options.setOption(ChannelOptions.autoRead, value: false)
            }.get()
            let left = clock.instant.duration(to: deadline)
            guard left > .zero, await waitUntilSetUp(within: left, clock: clock) else { return }
            // One more turn of the listening channel's loop: what it was woken for before has run by then.
            try? await server.eventLoop.submit {}.get()
            if state.withLock({ $0.acceptedCount }) == before { return }
        }
    }

    private final class Counting: ChannelDuplexHandler {
        typealias InboundIn = any Channel
        typealias OutboundIn = Never
        let connections: OpenConnections

        init(connections: OpenConnections) { self.connections = connections }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            connections.accepted(unwrapInboundIn(data))
            context.fireChannelRead(data)
        }

        func read(context: ChannelHandlerContext) {
            if connections.state.withLock({ $0.accepting }) { context.read() }
        }
    }

    private static func tellToFinish(_ channel: any Channel) {
        channel.eventLoop.execute { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
    }
}
