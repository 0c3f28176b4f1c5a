import NIOCore
import PushRelayCore
import PushRelayEventLoopClock

/// Closes a plain HTTP connection whose client is too slow: a request not sent in full within `http.request_timeout`
/// of its first byte is answered 408 and the connection closes (slowloris, a body trickled byte by byte), and a
/// keep-alive connection idle for `http.idle_timeout` is closed. Both close the connection even while answers wait to
/// be written to a client that does not read (the 408 gets `StateMachine.closeGrace`). First in the pipeline, so it
/// sees raw bytes before the HTTP decoder; a websocket upgrade removes it (the websocket has its own pings). The rules
/// are in `SlowClientGuard.StateMachine`.
package final class SlowClientGuard: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = IOData
    package typealias OutboundOut = IOData

    package struct Settings: Sendable {
        package var requestTimeout: Duration
        package var idleTimeout: Duration
        /// How often a connection checks its clocks.
        package var tick: Duration = .seconds(1)
        /// What the checks run on and read the time from.
        package var clock: any TimePort

        package init(requestTimeout: Duration, idleTimeout: Duration, tick: Duration = .seconds(1), clock: any TimePort) {

            self.requestTimeout = requestTimeout

            self.idleTimeout = idleTimeout

            self.tick = tick

            self.clock = clock

        }
    }

    private let settings: Settings
    /// Completes the 408's head as every answer's is.
    private let head: ResponseHead
    private var machine: StateMachine?
    private var timer: ScheduledTimer?

    package init(settings: Settings, head: ResponseHead) {
        self.settings = settings
        self.head = head
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        machine = StateMachine(now: settings.clock.instant, requestTimeout: settings.requestTimeout, idleTimeout: settings.idleTimeout)
        timer = settings.clock.scheduleRepeating(every: settings.tick, on: context.eventLoop.assumeIsolated()) {
            self.tick(context: context)
        }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    package func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        machine?.received(now: settings.clock.instant)
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        machine?.answered(now: settings.clock.instant)
        context.write(data, promise: promise)
    }

    private func tick(context: ChannelHandlerContext) {
        guard case .close(let expiry)? = machine?.timerFired(now: settings.clock.instant) else { return }
        switch expiry {
        case .idle, .unwrittenAnswer:
            timer?.cancel()
            timer = nil
            if expiry == .unwrittenAnswer || !context.channel.isWritable { context.channel.resetOnClose() }
            context.close(promise: nil)
        case .requestTimeout:
            let error = APIError(
                .requestTimeout,
                "RequestTimeout",
                "The request was not received in full within \(settings.requestTimeout.components.seconds) s of its first byte (http.request_timeout); the connection is closed."
            )
            let buffer = head.closingBytes(error, allocator: context.channel.allocator)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            // The timer goes on: it closes the connection if the answer is stuck behind others the client does not read.
            context.writeAndFlush(wrapOutboundOut(.byteBuffer(buffer))).whenComplete { _ in bound.value.close(promise: nil) }
        }
    }

    /// Takes the guard out of an upgraded (websocket) connection's pipeline.
    package static func remove(from channel: any Channel) {
        if let handler = try? channel.pipeline.syncOperations.handler(type: SlowClientGuard.self) {
            channel.pipeline.syncOperations.removeHandler(handler, promise: nil)
        }
    }
}
