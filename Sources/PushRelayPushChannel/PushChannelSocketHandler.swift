import Logging
import NIOCore
import NIOWebSocket
import PushRelayCore
import PushRelayEventLoopClock
import Synchronization

/// The websocket frames of one connection, on its event loop: text to the session, close frames and protocol errors
/// handled here. Pings, pongs, the keepalive and reading while the peer does not read are
/// `PushChannelSocketFlowHandler`'s, just before this one.
final class PushChannelSocketHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let session: PushChannelSessionRunner
    private let closing: SocketClosing
    private let clock: any TimePort
    private var gone = false

    init(session: PushChannelSessionRunner, closing: SocketClosing, clock: any TimePort) {
        self.session = session
        self.closing = closing
        self.clock = clock
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch PushChannelInboundFrame(unwrapInboundIn(data)) {
        case .text(let text):
            session.received(.text(text))
        case .invalidText:
            close(context: context, code: .dataInconsistentWithMessage, reason: "text frame is not valid UTF-8")
        case .binary:
            session.received(.binary)
        case .ping:
            // Answered by `PushChannelSocketFlowHandler`, which passes no ping on.
            break
        case .fragmentedControl:
            context.close(promise: nil)
        case .close(let code):
            // The peer says goodbye first (answered with its code, then the socket closes), or this answers our own
            // close frame (the socket just closes).
            close(context: context, code: code, reason: "")
        case .ignored:
            break
        }
    }

    /// A protocol error after the frame decoder (a fragmented message over `channel.max_frame_bytes`, too many
    /// fragments): a close frame that says why, then the socket closes. (A single oversized frame is refused by NIO's
    /// decoder, which closes with 1009 itself.)
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        session.endpoint.logger.debug("websocket error: \(error)", metadata: ["peer": .string(session.connection.peer)])
        switch error as? NIOWebSocketFrameAggregator.Error {
        case .accumulatedFrameSizeIsTooLarge?, .tooManyFragments?: close(context: context, code: .messageTooLarge, reason: "message too big")
        default: close(context: context, code: .protocolError, reason: "websocket protocol error")
        }
    }

    /// Closes from this side: a close frame with the code and reason, then the socket, once the frame is written or
    /// after `SocketClosing.timeout` (a peer that does not read never lets it out). If a close frame was sent
    /// already, only the socket.
    private func close(context: ChannelHandlerContext, code: WebSocketErrorCode, reason: String) {
        guard closing.claim() else {
            context.close(promise: nil)
            return
        }
        let channel = context.channel
        clock.schedule(after: SocketClosing.timeout, on: channel.eventLoop) { SocketClosing.reset(channel) }
        context.writeAndFlush(wrapOutboundOut(.close(code, reason: reason))).whenComplete { _ in context.close(promise: nil) }
    }

    /// The listener is stopping (`ChannelShouldQuiesceEvent`): the connection says goodbye with 1012 (service
    /// restart) after what is queued for it, so that the app reconnects, to another instance or to the next process.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        session.connection.markClosed(.serverShutdown)
    }

    func channelInactive(context: ChannelHandlerContext) {
        end()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end()
    }

    private func end() {
        guard !gone else { return }
        gone = true
        session.socketClosed()
    }
}
