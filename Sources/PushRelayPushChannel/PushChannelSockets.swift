import Logging
import NIOCore
import NIOWebSocket
import PushRelayCore
import PushRelayEventLoopClock
import PushRelayHTTP
import Synchronization

/// The live websocket connections: attaches the handlers after an upgrade, and closes every connection on shutdown.
package final class PushChannelSockets: Sendable {
    package let endpoint: PushChannelEndpoint
    /// A connection upgraded once the listener has begun closing is told goodbye (1012) at once: the listener's
    /// request to finish reached it before it was a websocket.
    package let lifecycle: ServerLifecycle
    package var settings: PushChannelSettings { endpoint.settings }
    private struct Live {
        var connections: [Int: PushChannelConnection] = [:]
        /// `waitUntilAllDisconnected` callers, offered `true` when the last connection's disconnect was handled.
        var whenEmpty: [FirstResult<Bool>] = []
    }

    private let live = Locked(Live())

    package init(endpoint: PushChannelEndpoint, lifecycle: ServerLifecycle = ServerLifecycle()) {
        self.endpoint = endpoint
        self.lifecycle = lifecycle
    }

    package var count: Int { live.withLock { $0.connections.count } }

    /// A websocket's write buffer: bytes written to the socket and not yet taken by the peer's TCP window, past which
    /// the channel is not writable (and so not read).
    static let writeBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 16 * 1024, high: 64 * 1024)

    /// Runs on the channel's event loop, right after the upgrade response. `peer` is the client's address (the
    /// connection's peer, or the client a trusted proxy names).
    package func attach(to channel: any Channel, peer: String) throws {
        let shared = SocketClosing()
        let connection = PushChannelConnection(
            peer: peer,
            bufferLimit: settings.outboundBuffer,
            byteLimit: settings.outboundBufferBytes,
            sink: .init(channel: channel, closing: shared, clock: endpoint.clock),
            logger: endpoint.logger
        )
        let session = PushChannelSessionRunner(
            endpoint: endpoint,
            connection: connection,
            setReading: { on in
                channel.setOption(ChannelOptions.autoRead, value: on).whenComplete { _ in
                    if on { channel.read() }
                }
            }
        ) { [self] in
            let waiters = live.withLock { live -> [FirstResult<Bool>] in
                live.connections[connection.id] = nil
                guard live.connections.isEmpty else { return [] }
                defer { live.whenEmpty = [] }
                return live.whenEmpty
            }
            for waiter in waiters { waiter.offer(true) }
            channel.close(promise: nil)
        }
        // Past the high mark the channel is not writable and the socket is not read (`PushChannelSocketFlowHandler`)
        // until what waits is down to the low mark.
        try channel.syncOptions?.setOption(ChannelOptions.writeBufferWaterMark, value: Self.writeBufferWaterMark)
        try channel.pipeline.syncOperations.addHandler(PushChannelInboundFrame.frameAggregator(maxFrameBytes: settings.maxFrameBytes))
        try channel.pipeline.syncOperations.addHandler(
            PushChannelSocketFlowHandler(
                pingInterval: .milliseconds(Int64(settings.pingIntervalMs)),
                clock: endpoint.clock,
                peer: peer,
                logger: endpoint.logger
            )
        )
        try channel.pipeline.syncOperations.addHandler(PushChannelSocketHandler(session: session, closing: shared, clock: endpoint.clock))
        live.withLock { $0.connections[connection.id] = connection }
        endpoint.opened(connection)
        if lifecycle.isClosing { connection.markClosed(.serverShutdown) }
    }

    /// Says goodbye to every connection (server shutdown): each gets a close frame after what is queued for it.
    package func closeAll() {
        for connection in live.withLock({ Array($0.connections.values) }) {
            connection.markClosed(.serverShutdown)
        }
    }

    /// Returns once every connection's disconnect has been handled (its session ended), or after `limit` on the
    /// endpoint's clock, logging how many were left.
    func waitUntilAllDisconnected(within limit: Duration, logger: Logger) async {
        let allGone = FirstResult<Bool>()
        let waiting = live.withLock { live -> Bool in
            guard !live.connections.isEmpty else { return false }
            live.whenEmpty.append(allGone)
            return true
        }
        guard waiting else { return }
        let timer = endpoint.clock.schedule(after: limit) { allGone.offer(false) }
        defer { timer.cancel() }
        let settled = await withTaskCancellationHandler {
            await withCheckedContinuation { allGone.start($0) }
        } onCancel: {
            allGone.offer(false)
        }
        if !settled {
            logger.warning("shutting down with websocket connections still closing", metadata: ["connections": .stringConvertible(count)])
        }
    }
}

/// Whether this side already sent its close frame; shared by the socket handler and the connection's sink.
package final class SocketClosing: Sendable {
    private let sent = Atomic<Bool>(false)
    /// True for the first caller only.
    package func claim() -> Bool { !sent.exchange(true, ordering: .relaxed) }
    /// How long to wait for the peer's close frame before closing the socket anyway.
    package static let timeout = Duration.seconds(2)

    /// Closes the socket with a reset (`SO_LINGER` 0) once `timeout` is over: the peer did not answer the close frame
    /// (most often because it does not read), so the kernel is not left retrying what is unsent for seconds more.
    package static func reset(_ channel: any Channel) {
        channel.resetOnClose()
        channel.close(promise: nil)
    }
}

extension WebSocketErrorCode {
    /// 1012, Service Restart (RFC 6455's registry): the server goes away for now; the client should reconnect.
    static let serviceRestart = WebSocketErrorCode(codeNumber: 1012)
}

extension WebSocketFrame {
    /// A close frame: the status code, then the reason (may be empty).
    package static func close(_ code: WebSocketErrorCode, reason: String) -> WebSocketFrame {
        var data = ByteBuffer()
        data.reserveCapacity(2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }
}

extension PushChannelConnection.Sink {
    /// Frames go to the NIO channel (from any thread); a close sends a close frame, then the socket closes when the
    /// peer answers with its own, or after `SocketClosing.timeout` on `clock`.
    package init(channel: any Channel, closing: SocketClosing, clock: any TimePort) {
        self.init(
            write: { text in
                try await channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text))).get()
            },
            close: { code, reason in
                guard closing.claim() else { return }
                // Scheduled first: a peer that stopped reading never lets the close frame out, and must not keep the
                // socket (and what is queued for it) open for that.
                clock.schedule(after: SocketClosing.timeout, on: channel.eventLoop) { SocketClosing.reset(channel) }
                try? await channel.writeAndFlush(WebSocketFrame.close(code, reason: reason)).get()
            },
            closeSoon: {
                clock.schedule(after: SocketClosing.timeout, on: channel.eventLoop) { SocketClosing.reset(channel) }
            }
        )
    }
}
