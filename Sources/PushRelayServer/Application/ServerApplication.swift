import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import PushRelayCore
import PushRelayHTTP
import ServiceLifecycle
import UnixSignals

/// The built server (`PushRelayApplication.build`): the router, the connections' pipeline, the listener and the
/// services, run in one service group and stopped as `ServerLifecycle` describes.
///
/// Run it with `runService()`: SIGTERM and SIGINT stop it gracefully (a second signal during the drain ends the
/// drain), and so does `lifecycle.beginStop()`; it returns once every service stopped. As a service in a group of
/// one's own, its graceful shutdown does the same. HummingbirdTesting's `.router` answers through `responder` alone.
public struct ServerApplication: ApplicationProtocol {
    public typealias Responder = RouterResponder<PushRelayRequestContext>

    public let responder: Responder
    public let lifecycle: ServerLifecycle
    public let logger: Logger
    public let services: [any Service]
    public var configuration: ApplicationConfiguration { .init(serverName: serverName) }

    let serverName: String
    /// Every answer's `Date`, `Server` and `Connection` (shared with the fast path).
    let head: ResponseHead
    /// The connections' pipeline, around the responder `run` makes.
    let channel: @Sendable (@escaping HTTPChannelHandler.Responder) -> PushRelayHTTPChannel
    let listener: HTTPListener.Settings
    let clock: any TimePort
    let serverRunning: @Sendable (any Channel) async -> Void

    public func onServerRunning(_ channel: any Channel) async { await serverRunning(channel) }

    /// Runs until stopped: SIGTERM and SIGINT (`signals`) call `lifecycle.beginStop()`, as a caller may.
    public func runService(gracefulShutdownSignals signals: [UnixSignal] = [.sigterm, .sigint]) async throws {
        let group = ServiceGroup(configuration: .init(services: [self], logger: logger))
        lifecycle.onStop { await group.triggerGracefulShutdown() }
        let lifecycle = self.lifecycle
        let logger = self.logger
        // Trapped before the server listens: a signal from then on stops it gracefully.
        let caught = signals.isEmpty ? nil : await UnixSignalsSequence(trapping: signals)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            if let caught {
                tasks.addTask {
                    for await signal in caught {
                        logger.info("\(signal) received", metadata: ["phase": .string("\(lifecycle.phase)")])
                        lifecycle.beginStop()
                    }
                }
            }
            try await group.run()
            tasks.cancelAll()
        }
    }

    /// The server and its services in one service group; the listener is last, so it stops first.
    public func run() async throws {
        let listener = HTTPListener(
            channel: channel(Self.respond(with: responder, head: head, logger: logger)),
            settings: listener,
            lifecycle: lifecycle,
            clock: clock,
            eventLoopGroup: eventLoopGroup,
            onServerRunning: serverRunning,
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: services + [listener], logger: logger))
        do {
            try await group.run()
        } catch {
            lifecycle.advance(to: .stopped)
            throw error
        }
        lifecycle.advance(to: .stopped)
        logger.info("stopped")
    }

    /// Hummingbird's own responder around the router: a request id in the request's logger, 500 for an error no
    /// middleware turned into an answer, the head's common fields (`ResponseHead`). An answer that ends the connection
    /// though its request did not ask (a body past the limit, a stop) ends Hummingbird's request loop, which closes the
    /// connection: nothing read behind it is taken as a request.
    static func respond(with responder: Responder, head: ResponseHead, logger: Logger) -> HTTPChannelHandler.Responder {
        { request, writer, channel in
            let requestLogger = logger.with(metadataKey: "hb.request.id", value: .stringConvertible(Hummingbird.RequestID()))
            let (response, closes) = try await withLogger(requestLogger) { logger in
                let context = PushRelayRequestContext(source: .init(channel: channel, logger: logger))
                var response: Response
                do {
                    response = try await responder.respond(to: request, context: context)
                } catch let error as HTTPParserError {
                    throw error
                } catch {
                    logger.debug("Unrecognised Error", metadata: ["error.type": "\(error)"])
                    response = Response(status: .internalServerError, body: .init())
                }
                let closes = head.complete(&response.headers, request: request.headers)
                return (response, closes)
            }
            do {
                try await writer.write(response: response.head, body: response.body)
            } catch is HTTPParserError {
                // Another answer must not be written: the connection ends.
                throw ParseErrorWhileWritingResponse()
            }
            // Hummingbird reads on after an answer unless its request says `Connection: close`.
            if closes, request.headers[.connection] != "close" { throw AnswerEndedConnection() }
        }
    }

    struct ParseErrorWhileWritingResponse: Error {}
    /// The answer just written ends its connection.
    struct AnswerEndedConnection: Error {}
}

extension Logger {
    fileprivate func with(metadataKey: String, value: MetadataValue) -> Logger {
        var logger = self
        logger[metadataKey: metadataKey] = value
        return logger
    }
}
