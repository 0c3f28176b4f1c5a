import Foundation
import Logging
import NIOCore
import PushRelayCore
import PushRelayEventLoopClock

/// `type: fcm`: delivers through the FCM HTTP v1 API with a service account.
///
/// Each send is `POST {endpoint}/v1/projects/{project_id}/messages:send` with `{"message": <translated message>}`
/// and a cached OAuth access token (`GoogleOAuthTokenSource`). A 401 renews the token once and retries once.
/// Answers map to `DeliveryFailure` as described in `FCMOutcome`. The provider owns its connection pool; call
/// `shutdown()` before releasing it.
public final class FCMProvider: ConfiguredProvider {
    public let name: String
    public let configuration: Configuration
    /// The shared access-token cache (exposed for diagnostics and tests: `tokenRequests`).
    public let tokenSource: GoogleOAuthTokenSource
    private let client: ProviderHTTPClient
    private let sendPath: String
    private let origin: UpstreamOrigin?
    private let clock: any TimePort
    private let logger: Logger

    public init(name: String, configuration: Configuration, clock: any TimePort = EventLoopClock(), logger: Logger? = nil) {
        self.name = name
        self.configuration = configuration
        self.clock = clock
        var logger = logger ?? Logger(label: "pushrelay.provider.fcm")
        logger[metadataKey: "provider"] = "\(name)"
        self.logger = logger
        self.client = ProviderHTTPClient(transport: configuration.transport, clock: clock, logger: logger)
        self.origin = UpstreamOrigin(url: configuration.endpoint)
        self.sendPath = "/v1/projects/\(configuration.projectID)/messages:send"
        self.tokenSource = GoogleOAuthTokenSource(
            account: configuration.serviceAccount,
            client: client,
            clock: clock,
            timeout: configuration.transport.requestTimeout,
            logger: logger,
            providerName: name
        )
    }

    public func send(_ delivery: Delivery) async throws(DeliveryFailure) -> DeliveryReceipt {
        try await send(delivery, validateOnly: false)
    }

    /// Has FCM check the notification as it would send it, token included, without delivering it (`validate_only`).
    public func validate(_ delivery: Delivery) async throws(DeliveryFailure) -> DeliveryReceipt {
        try await send(delivery, validateOnly: true)
    }

    private func send(_ delivery: Delivery, validateOnly: Bool) async throws(DeliveryFailure) -> DeliveryReceipt {
        let message = delivery.notification.fcmMessage
        let body = JSONWriter.bytes(validateOnly ? ["validate_only": true, "message": message] : ["message": message])
        var accessToken = try await tokenSource.accessToken()
        var response = try await post(body, accessToken: accessToken)
        if response.status == 401, FCMErrorBody(json: response.json).errorCode != "THIRD_PARTY_AUTH_ERROR" {
            logger.info("FCM answered 401; renewing the access token and retrying once")
            accessToken = try await tokenSource.renew(after: accessToken)
            response = try await post(body, accessToken: accessToken)
        }
        let outcome = FCMOutcome.interpret(
            response,
            sentMessage: message,
            pushToken: delivery.pushToken,
            projectID: configuration.projectID,
            providerName: name,
            now: clock.now()
        )
        switch outcome {
        case .success(let receipt):
            logger.debug("FCM accepted", metadata: ["token": "\(TokenDisplay.short(delivery.pushToken))", "message_id": "\(receipt.messageID)"])
            return receipt
        case .failure(let failure):
            logger.notice(
                "FCM refused",
                metadata: ["token": "\(TokenDisplay.short(delivery.pushToken))", "status": "\(response.status)", "error": "\(failure.message)"]
            )
            throw failure
        }
    }

    private func post(_ body: [UInt8], accessToken: String) async throws(DeliveryFailure) -> UpstreamResponse {
        guard let origin else { throw .configuration(message: "\(name): endpoint is not an http(s) URL") }
        let request = UpstreamRequest(
            origin: origin,
            path: sendPath,
            headers: [(name: "authorization", value: "Bearer \(accessToken)"), (name: "content-type", value: "application/json; charset=utf-8")],
            body: ByteBuffer(bytes: body)
        )
        return try await client.execute(request, timeout: configuration.transport.requestTimeout, providerName: name)
    }

    public var transportFigures: ProviderTransportFigures? { client.figures }

    /// Closes the connection pool. Must be called once before the provider is released.
    public func shutdown() async {
        await client.shutdown()
    }
}
