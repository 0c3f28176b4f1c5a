import Foundation
import Logging
import NIOCore
import PushRelayCore
import PushRelayEventLoopClock
import PushRelayWebPush

/// `type: webpush`: delivers to browser push subscriptions (RFC 8030) with VAPID (RFC 8292) and `aes128gcm`
/// message encryption (RFC 8291).
///
/// Each send is a `POST` to the subscription's endpoint, which must match `allowed_endpoints` and must not be or
/// resolve to a loopback, private, link-local… address outside `allowed_private_networks` (anything else is refused
/// before any connection is made; `OutboundAddressGuard`), with `Content-Encoding: aes128gcm`, `TTL`, `Urgency`, `Topic` and
/// `Authorization: vapid t=…, k=…`. Answers: 200/201/202 delivered; 404/410 the subscription is gone
/// (`invalidToken`); 413 `payloadTooLarge`; 429 and 5xx transient (with `Retry-After`); 400/401/403 a VAPID or
/// configuration problem. A push service whose host does not resolve or cannot be connected to is the subscription's
/// problem, not the provider's: `invalidTarget` with `EndpointUnreachable`, which the circuit breaker does not count.
public final class WebPushProvider: ConfiguredProvider {
    public let name: String
    public let configuration: Configuration
    private let signer: VAPIDSigner
    /// The `Authorization` header per push service, signed once per audience and reused until an hour before expiry.
    private let authorizations: VAPIDAuthorizations
    private let addressGuard: OutboundAddressGuard
    private let client: ProviderHTTPClient
    private let clock: any TimePort
    private let logger: Logger

    public init(name: String, configuration: Configuration, clock: any TimePort = EventLoopClock(), logger: Logger? = nil) {
        self.name = name
        self.configuration = configuration
        self.clock = clock
        self.signer = VAPIDSigner(key: configuration.vapidKey, contact: configuration.contact)
        self.authorizations = VAPIDAuthorizations(signer: signer)
        self.addressGuard = OutboundAddressGuard(policy: configuration.addressPolicy)
        var logger = logger ?? Logger(label: "pushrelay.provider.webpush")
        logger[metadataKey: "provider"] = "\(name)"
        self.logger = logger
        self.client = ProviderHTTPClient(transport: configuration.transport, clock: clock, logger: logger)
    }

    /// The `applicationServerKey` browsers must subscribe with.
    public var applicationServerKey: String { signer.applicationServerKey }

    public func send(_ delivery: Delivery) async throws(DeliveryFailure) -> DeliveryReceipt {
        guard let message = delivery.notification.webPush else {
            throw .configuration(
                message:
                    "\(name) is a webpush provider, but this notification has no WebPush form. Route app '\(delivery.appID ?? "?")' to an fcm or apns provider."
            )
        }
        let host = Configuration.netloc(message.endpoint) ?? "(not an https URL)"
        guard configuration.allows(endpoint: message.endpoint), let audience = VAPIDSigner.audience(forEndpoint: message.endpoint) else {
            logger.warning(
                "refused a WebPush endpoint outside allowed_endpoints",
                metadata: ["endpoint_host": "\(host)", "token": "\(TokenDisplay.short(message.p256dh))"]
            )
            throw .invalidTarget(
                reason: DeliveryFailure.endpointNotAllowed,
                message: "The subscription's push service '\(host)' is not one this server sends to (\(name).allowed_endpoints); nothing was sent."
            )
        }
        // Right before the request, every address the host resolves to; a new connection goes to one of those.
        let checked: [OutboundAddressPolicy.Address]
        switch await addressGuard.check(url: message.endpoint) {
        case .success(let addresses):
            checked = addresses
        case .failure(.unresolvable(_, let problem)):
            // The host is the caller's choice (any name under an allowed_endpoints glob): its failure is not the provider's.
            logger.notice("a WebPush endpoint's host does not resolve", metadata: ["endpoint_host": "\(host)", "problem": "\(problem)"])
            throw .invalidTarget(
                reason: DeliveryFailure.endpointUnreachable,
                message: "The subscription's push service '\(host)' does not resolve (\(problem)); nothing was sent."
            )
        case .failure(let refusal):
            logger.warning(
                "refused a WebPush endpoint with a non-public address",
                metadata: ["endpoint_host": "\(host)", "token": "\(TokenDisplay.short(message.p256dh))", "problem": "\(refusal.message)"]
            )
            throw .invalidTarget(
                reason: DeliveryFailure.endpointNotAllowed,
                message: "The subscription's push service \(refusal.message) (\(name).allowed_private_networks); nothing was sent."
            )
        }
        guard let p256dh = Base64URL.decode(message.p256dh), let auth = Base64URL.decode(message.auth) else {
            throw .invalidToken(
                reason: "BadSubscriptionKeys",
                message: "the subscription keys (p256dh \(TokenDisplay.short(message.p256dh)), auth) are not base64url"
            )
        }
        let body: [UInt8]
        do {
            body = try WebPushEncryption.encrypt(message.body, p256dh: p256dh, auth: auth)
        } catch {
            switch error {
            case .tooLarge: throw .payloadTooLarge(message: "\(error)")
            case .badSubscriptionKey, .badAuthSecret: throw .invalidToken(reason: "BadSubscriptionKeys", message: "\(error)")
            case .undecryptable: throw .invalidPayload(reason: "EncryptionFailed", message: "\(error)")
            }
        }
        var sentHeaders: [String: String] = ["ttl": String(configuration.ttlSeconds), "content-encoding": "aes128gcm"]
        if let u = message.urgency { sentHeaders["urgency"] = u }
        if let t = message.topic { sentHeaders["topic"] = t }
        var headers = sentHeaders.sorted(by: { $0.key < $1.key }).map { (name: $0.key, value: $0.value) }
        headers.append((name: "content-type", value: "application/octet-stream"))
        headers.append((name: "authorization", value: authorizations.header(audience: audience, now: clock.now())))
        guard var request = UpstreamRequest(url: message.endpoint, headers: headers, body: ByteBuffer(bytes: body)) else {
            throw .invalidTarget(
                reason: DeliveryFailure.endpointNotAllowed,
                message: "The subscription's endpoint is not an http(s) URL; nothing was sent."
            )
        }
        request.pin(to: checked)
        let response: UpstreamResponse
        do {
            response = try await client.execute(request, timeout: configuration.transport.requestTimeout, providerName: name)
        } catch {
            throw Self.destinationFailure(error, host: host)
        }

        let sent: JSONValue = [
            "endpoint_host": .string(host), "headers": .object(sentHeaders.mapValues(JSONValue.string)),
            "payload": (try? JSONParser.parse(message.body)) ?? .string(String(decoding: message.body, as: UTF8.self)),
        ]
        let outcome = WebPushOutcome.interpret(
            status: response.status,
            retryAfter: response.header("retry-after"),
            location: response.header("location"),
            host: host,
            token: message.p256dh,
            providerName: name,
            sent: sent,
            now: clock.now()
        )
        switch outcome {
        case .success(let receipt):
            logger.debug("push service accepted", metadata: ["endpoint_host": "\(host)", "token": "\(TokenDisplay.short(message.p256dh))"])
            return receipt
        case .failure(let failure):
            logger.notice(
                "push service refused",
                metadata: [
                    "endpoint_host": "\(host)", "token": "\(TokenDisplay.short(message.p256dh))", "status": "\(response.status)",
                    "error": "\(failure.message)",
                ]
            )
            throw failure
        }
    }

    /// Transport reasons for a connection to the push service that could not be made (refused, unreachable, timed out,
    /// TLS, or the request refused on two connections): nothing was processed.
    static let connectFailureReasons: Set<String> = ["ConnectionError", "ConnectTimeout"]

    /// A failure to connect to the caller-chosen push service as `EndpointUnreachable` (its own, not the provider's);
    /// any other failure as it is.
    static func destinationFailure(_ failure: DeliveryFailure, host: String) -> DeliveryFailure {
        guard case .transient(let reason, let message, _) = failure, connectFailureReasons.contains(reason) else { return failure }
        return .invalidTarget(
            reason: DeliveryFailure.endpointUnreachable,
            message: "The subscription's push service '\(host)' cannot be reached (\(message)); nothing was sent."
        )
    }

    public var transportFigures: ProviderTransportFigures? { client.figures }

    public func shutdown() async {
        await client.shutdown()
    }
}

/// Maps a push service's answer to a receipt or a typed failure. Pure.
enum WebPushOutcome {
    static func interpret(
        status: Int,
        retryAfter: String?,
        location: String?,
        host: String,
        token: String,
        providerName: String,
        sent: JSONValue,
        now: Date
    ) -> Result<DeliveryReceipt, DeliveryFailure> {
        let short = TokenDisplay.short(token)
        switch status {
        case 200, 201, 202:
            // The Location header names the message; keep only its last path segment (the URL carries secrets).
            let id = location.flatMap { $0.split(separator: "/").last.map(String.init) } ?? "webpush:\(RandomID.uuid())"
            return .success(DeliveryReceipt(messageID: id, sentPayload: sent))
        case 404, 410:
            return .failure(
                .invalidToken(
                    reason: status == 410 ? "Gone" : "NotFound",
                    message: "\(host) says the push subscription \(short) no longer exists (HTTP \(status)); the browser must subscribe again."
                )
            )
        case 413:
            return .failure(.payloadTooLarge(message: "\(host) refused the message as too large (HTTP 413); push services accept 4096 bytes."))
        case 429, 500...599:
            return .failure(
                .transient(
                    reason: "HTTP \(status)",
                    message: "\(providerName): push service \(host) is unavailable or throttling (HTTP \(status))",
                    retryAfterSeconds: RetryAfter.seconds(retryAfter, now: now)
                )
            )
        case 400, 401, 403:
            return .failure(
                .configuration(
                    message:
                        "\(providerName): push service \(host) refused the request (HTTP \(status)): check vapid_private_key (the key the browser subscribed with) and vapid_contact_email."
                )
            )
        default:
            return .failure(.invalidPayload(reason: "HTTP \(status)", message: "\(providerName): push service \(host) answered HTTP \(status)."))
        }
    }
}
