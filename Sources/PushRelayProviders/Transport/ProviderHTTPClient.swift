import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PushRelayCore

/// How a provider talks to its upstream: HTTP/2 over TLS on one long-lived connection per origin (as FCM, APNs and
/// the big WebPush services serve it), and HTTP/1.1 on a pool of keep-alive connections per origin for `http://`
/// endpoints and for servers that do not offer HTTP/2. Both run on the event loops directly, with the same TLS
/// settings, deadlines and failures.
///
/// Every outcome that is not an HTTP answer (refused connection, TLS failure, reset, GOAWAY, deadline) is a
/// `DeliveryFailure.transient`, so callers only ever see typed outcomes. A request the server says it did not
/// process is sent again at once: after `REFUSED_STREAM` once, above a GOAWAY's last stream id on the next connection
/// (as often as connections rotate, within the deadline); one that never left (held under the server's stream cap when
/// its connection got a GOAWAY) goes to the next connection without counting as a resend. A request
/// that was written and then got no answer (the connection closed or was found dead, the stream was reset, the
/// deadline passed) may have been processed: its failure says so (`DeliveryFailure.possiblyDeliveredReasons`) and
/// nobody sends it again. Call `shutdown()` once before release.
final class ProviderHTTPClient: Sendable {
    private let transport: ProviderTransport
    private let pool: UpstreamHTTP2Pool
    private let http1: UpstreamHTTP1Pool
    /// Origins that finished a TLS handshake without offering HTTP/2.
    private let http1Origins = Locked<Set<UpstreamOrigin>>([])
    /// What the connections did, for `/metrics`.
    let figures: ProviderTransportFigures

    private let clock: any TimePort

    /// `logger` gets one warning per connection found dead. Deadlines are measured, and the connections' timers run,
    /// on `clock`.
    init(
        transport: ProviderTransport,
        clock: any TimePort,
        figures: ProviderTransportFigures = ProviderTransportFigures(),
        logger: Logger? = nil
    ) {
        self.transport = transport
        self.clock = clock
        self.figures = figures
        var events = UpstreamConnectionEvents()
        events.goAway = { figures.connectionRotated() }
        events.dead = { origin, waiting in
            figures.connectionDead()
            logger?.warning(
                "provider connection found dead: a PING went unanswered; its requests are answered as possibly delivered and a new connection takes the next ones",
                metadata: ["origin": .string(origin.description), "waiting": .stringConvertible(waiting)]
            )
        }
        pool = UpstreamHTTP2Pool(
            tls: transport.tlsConfiguration(alpn: ["h2", "http/1.1"]),
            group: MultiThreadedEventLoopGroup.singleton,
            connectTimeout: min(transport.requestTimeout, .seconds(10)),
            idleTimeout: transport.idleTimeout,
            clock: clock,
            events: events,
            resolver: transport.resolver
        )
        http1 = UpstreamHTTP1Pool(
            tls: transport.tlsConfiguration(alpn: ["http/1.1"]),
            group: MultiThreadedEventLoopGroup.singleton,
            maxConnections: transport.maxConnections,
            connectTimeout: min(transport.requestTimeout, .seconds(10)),
            idleTimeout: transport.idleTimeout,
            clock: clock,
            resolver: transport.resolver
        )
    }

    /// Sends `request` and returns the answer, or throws a transient failure before `timeout` has passed.
    func execute(_ request: UpstreamRequest, timeout: TimeAmount, providerName: String) async throws(DeliveryFailure) -> UpstreamResponse {
        let deadline = clock.instant + Duration(timeout)
        guard request.origin.secure, !http1Origins.withLock({ $0.contains(request.origin) }) else {
            return try await viaHTTP1(request, deadline: deadline, providerName: providerName)
        }
        var refusedOnce = false
        var tries = 0
        while true {
            tries += 1
            let connection: UpstreamHTTP2Connection
            do {
                connection = try await pool.connection(to: request.origin, at: request.connectAddresses)
            } catch UpstreamConnectError.http2NotOffered {
                http1Origins.withLock { _ = $0.insert(request.origin) }
                return try await viaHTTP1(request, deadline: deadline, providerName: providerName)
            } catch {
                throw Self.failure(connecting: error, origin: request.origin, providerName: providerName)
            }
            do {
                return try await connection.execute(request, deadline: deadline).get()
            } catch UpstreamStreamFailure.notSent where tries < Self.maxTries && deadline > clock.instant {
                // It never left: the connection it waited on stopped taking requests.
                continue
            } catch UpstreamStreamFailure.aboveGoAway where tries < Self.maxTries && deadline > clock.instant {
                // Sent, not processed, and its connection is rotating: on the next one.
                figures.resent(.notProcessed)
                continue
            } catch UpstreamStreamFailure.notProcessed where !refusedOnce && tries < Self.maxTries && deadline > clock.instant {
                // REFUSED_STREAM: once more at once; refused again, it waits for the dispatcher's backoff.
                refusedOnce = true
                figures.resent(.notProcessed)
                continue
            } catch {
                throw counted(Self.failure(exchanging: error, origin: request.origin, providerName: providerName))
            }
        }
    }

    /// Times one request is tried at most: once more after `REFUSED_STREAM`, and on the next connection each time the
    /// one it was on rotated with a GOAWAY before processing it or before it was sent (a front end rotating its
    /// connections every few streams).
    static let maxTries = 8

    private func viaHTTP1(
        _ request: UpstreamRequest,
        deadline: ContinuousClock.Instant,
        providerName: String
    ) async throws(DeliveryFailure) -> UpstreamResponse {
        do {
            do {
                return try await http1.execute(request, deadline: deadline).get()
            } catch UpstreamStreamFailure.notProcessed where deadline > clock.instant {
                // The connection closed before the request was written: once more, on another.
                figures.resent(.notProcessed)
                return try await http1.execute(request, deadline: deadline).get()
            }
        } catch let failure as UpstreamStreamFailure {
            throw counted(Self.failure(exchanging: failure, origin: request.origin, providerName: providerName))
        } catch {
            throw Self.failure(connecting: error, origin: request.origin, providerName: providerName)
        }
    }

    /// `failure`, counted in `figures` when the provider may have delivered it.
    private func counted(_ failure: DeliveryFailure) -> DeliveryFailure {
        if failure.mayHaveBeenDelivered { figures.possiblyDelivered() }
        return failure
    }

    /// Closes every connection.
    func shutdown() async {
        await pool.shutdown()
        await http1.shutdown()
    }

    private static func failure(connecting error: any Error, origin: UpstreamOrigin, providerName: String) -> DeliveryFailure {
        var timedOut = false
        if case UpstreamConnectError.timedOut = error { timedOut = true }
        if case ChannelError.connectTimeout = error { timedOut = true }
        if timedOut {
            // Nothing was sent: safe to try again.
            return .transient(
                reason: "ConnectTimeout",
                message: "\(providerName): no answer from \(origin.description) in time (connect)",
                retryAfterSeconds: nil
            )
        }
        switch error {
        case is CancellationError:
            return .transient(
                reason: "Cancelled",
                message: "\(providerName): the request to \(origin.description) was cancelled",
                retryAfterSeconds: nil
            )
        default:
            return .transient(
                reason: "ConnectionError",
                message: "\(providerName): cannot reach \(origin.description): \(String(describing: error))",
                retryAfterSeconds: nil
            )
        }
    }

    private static func failure(exchanging error: any Error, origin: UpstreamOrigin, providerName: String) -> DeliveryFailure {
        let target = origin.description
        let notResent = "It may have been delivered, so it is not sent again."
        switch error as? UpstreamStreamFailure {
        case .timedOut:
            return .transient(reason: "Timeout", message: "\(providerName): no answer from \(target) in time. \(notResent)", retryAfterSeconds: nil)
        case .notProcessed, .notSent, .aboveGoAway:
            return .transient(
                reason: "ConnectionError",
                message: "\(providerName): \(target) did not take the request on any connection tried (GOAWAY or REFUSED_STREAM)",
                retryAfterSeconds: nil
            )
        case .reset(let code):
            return .transient(
                reason: "StreamReset",
                message: "\(providerName): \(target) reset the request (HTTP/2 error \(code)). \(notResent)",
                retryAfterSeconds: nil
            )
        case .connectionDead:
            return .transient(
                reason: "ConnectionLost",
                message: "\(providerName): the connection to \(target) went silent (no answer to a PING) before the answer. \(notResent)",
                retryAfterSeconds: nil
            )
        case .connectionClosed, nil:
            return .transient(
                reason: "ConnectionLost",
                message: "\(providerName): the connection to \(target) closed before the answer. \(notResent)",
                retryAfterSeconds: nil
            )
        }
    }
}
