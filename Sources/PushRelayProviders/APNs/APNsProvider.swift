import Foundation
import Logging
import NIOCore
import PushRelayCore
import PushRelayEventLoopClock

/// `type: apns`: delivers straight to Apple Push Notification service over HTTP/2.
///
/// Each send is `POST {endpoint}/3/device/<token>` with the translated `apns-*` headers, `apns-topic` (suffixed per
/// push type), a fresh lowercase `apns-id`, and — under token auth — the shared provider JWT. Payload and
/// collapse-id limits are checked before anything is sent. A 403 `ExpiredProviderToken` renews the JWT once and
/// retries once with the same `apns-id`. The provider keeps its own long-lived pooled connections; call
/// `shutdown()` before releasing it.
public final class APNsProvider: ConfiguredProvider {
    public let name: String
    public let configuration: Configuration
    private let tokens: APNsProviderTokenCache?
    private let client: ProviderHTTPClient
    private let origin: UpstreamOrigin?
    private let clock: any TimePort
    private let logger: Logger

    public init(name: String, configuration: Configuration, clock: any TimePort = EventLoopClock(), logger: Logger? = nil) {
        self.name = name
        self.configuration = configuration
        self.clock = clock
        var logger = logger ?? Logger(label: "pushrelay.provider.apns")
        logger[metadataKey: "provider"] = "\(name)"
        self.logger = logger
        if case .token(let keyID, let teamID, let key) = configuration.authentication {
            tokens = APNsProviderTokenCache(keyID: keyID, teamID: teamID, key: key, clock: clock)
        } else {
            tokens = nil
        }
        client = ProviderHTTPClient(transport: configuration.transport, clock: clock, logger: logger)
        origin = UpstreamOrigin(url: configuration.endpoint)
    }

    /// How many provider JWTs were signed so far (diagnostics and tests).
    public var providerTokensGenerated: Int { tokens?.generatedCount ?? 0 }

    public func send(_ delivery: Delivery) async throws(DeliveryFailure) -> DeliveryReceipt {
        let apnsID = RandomID.uuid()
        let request = try APNsRequestBuilder.prepare(delivery, bundleID: configuration.topic, apnsID: apnsID, providerName: name)

        var jwt = try providerToken()
        var response = try await post(request, jwt: jwt)
        if response.status == 403, APNsOutcome.reason(of: response) == .expiredProviderToken, let rejected = jwt {
            if let renewed = try renewedProviderToken(after: rejected) {
                logger.info("APNs answered ExpiredProviderToken; retrying once with a new provider token")
                jwt = renewed
                response = try await post(request, jwt: jwt)
            }
        }
        let outcome = APNsOutcome.interpret(
            response,
            request: request,
            environment: configuration.environment.rawValue,
            providerName: name,
            now: clock.now()
        )
        switch outcome {
        case .success(let receipt):
            logger.debug("APNs accepted", metadata: ["token": "\(TokenDisplay.short(request.deviceToken))", "apns_id": "\(receipt.messageID)"])
            return receipt
        case .failure(let failure):
            logger.notice(
                "APNs refused",
                metadata: ["token": "\(TokenDisplay.short(request.deviceToken))", "status": "\(response.status)", "error": "\(failure.message)"]
            )
            throw failure
        }
    }

    func providerToken() throws(DeliveryFailure) -> String? {
        guard let tokens else { return nil }
        do {
            return try tokens.current()
        } catch {
            throw .configuration(message: "\(name): cannot sign the APNs provider token with key_file")
        }
    }

    private func renewedProviderToken(after rejected: String) throws(DeliveryFailure) -> String? {
        guard let tokens else { return nil }
        do {
            return try tokens.renew(after: rejected)
        } catch {
            throw .configuration(message: "\(name): cannot sign the APNs provider token with key_file")
        }
    }

    func post(_ r: APNsPreparedRequest, jwt: String?) async throws(DeliveryFailure) -> UpstreamResponse {
        guard let origin else { throw .configuration(message: "\(name): endpoint is not an http(s) URL") }
        var headers = r.headers.sorted(by: { $0.key < $1.key }).map { (name: $0.key, value: $0.value) }
        if let jwt { headers.append((name: "authorization", value: "bearer \(jwt)")) }
        headers.append((name: "content-type", value: "application/json"))
        let request = UpstreamRequest(origin: origin, path: r.path, headers: headers, body: ByteBuffer(bytes: r.body))
        return try await client.execute(request, timeout: configuration.transport.requestTimeout, providerName: name)
    }

    public var transportFigures: ProviderTransportFigures? { client.figures }

    /// Closes the connection pool. Must be called once before the provider is released.
    public func shutdown() async {
        await client.shutdown()
    }
}
