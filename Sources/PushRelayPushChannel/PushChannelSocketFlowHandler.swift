import Logging
import NIOCore
import NIOWebSocket
import PushRelayCore
import PushRelayEventLoopClock

/// A websocket's pings, pongs, keepalive and reads, between the frame aggregator and `PushChannelSocketHandler`
/// (which gets every other frame): runs `PushChannelSocketFlow` on the channel's event loop.
///
/// While the channel is not writable the socket is not read (the pipeline's `read` is held), pings are answered with
/// one pong once it is writable again, and the keepalive ping (every `pingInterval` on `clock`) waits too; a peer
/// that does not answer a ping with its payload by the next round is closed. A peer that closes its side of the
/// connection (`ChannelEvent.inputClosed`) is closed at once.
package final class PushChannelSocketFlowHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = WebSocketFrame
    package typealias InboundOut = WebSocketFrame
    package typealias OutboundIn = WebSocketFrame
    package typealias OutboundOut = WebSocketFrame

    private let pingInterval: Duration
    private let clock: any TimePort
    private let peer: String
    private let logger: Logger
    private var flow = PushChannelSocketFlow()
    private var keepalive: ScheduledTimer?

    package init(pingInterval: Duration, clock: any TimePort, peer: String, logger: Logger) {
        self.pingInterval = pingInterval
        self.clock = clock
        self.peer = peer
        self.logger = logger
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        flow = PushChannelSocketFlow(writable: context.channel.isWritable)
        keepalive = clock.scheduleRepeating(every: pingInterval, on: context.eventLoop.assumeIsolated()) {
            self.keepaliveDue(context: context)
        }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        stopKeepalive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        stopKeepalive()
        context.fireChannelInactive()
    }

    private func stopKeepalive() {
        keepalive?.cancel()
        keepalive = nil
    }

    private func keepaliveDue(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let payload = ByteBuffer(string: "pushrelay-" + String(UInt64.random(in: 0...UInt64.max), radix: 16))
        switch flow.keepaliveDue(payload: payload) {
        case .close:
            logger.debug("websocket peer did not answer a ping; closing", metadata: ["peer": .string(peer)])
            context.close(promise: nil)
        case .ping(let payload):
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: payload)), promise: nil)
        case .wait:
            break
        }
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        // A fragmented control frame goes on, for the socket handler to refuse.
        guard frame.fin else {
            context.fireChannelRead(data)
            return
        }
        switch frame.opcode {
        case .ping:
            if let pong = flow.pingReceived(frame.unmaskedData) {
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: pong)), promise: nil)
            }
        case .pong:
            flow.pongReceived(frame.unmaskedData)
        default:
            context.fireChannelRead(data)
        }
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        let resumption = flow.writabilityChanged(to: context.channel.isWritable)
        if let pong = resumption.pong {
            context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: pong)), promise: nil)
        }
        if let ping = resumption.ping {
            context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: ping)), promise: nil)
        }
        if resumption.pong != nil || resumption.ping != nil { context.flush() }
        if resumption.read { context.read() }
        context.fireChannelWritabilityChanged()
    }

    package func read(context: ChannelHandlerContext) {
        switch flow.readRequested() {
        case .read: context.read()
        case .hold: break
        }
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            logger.debug("websocket peer closed its side; closing", metadata: ["peer": .string(peer)])
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
