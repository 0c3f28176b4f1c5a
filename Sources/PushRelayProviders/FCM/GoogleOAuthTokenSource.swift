import Foundation
import Logging
import NIOCore
import PushRelayCore

/// Google OAuth access tokens for one service account, cached and shared by every FCM request.
///
/// - The token is refreshed `refreshMargin` before `expires_in` runs out (5 min, or half the lifetime for short ones).
/// - Concurrent callers that find no usable token share one in-flight refresh.
/// - `renew(after:)` drops a token FCM answered 401 to; if a refresh already replaced it, the newer token is returned
///   without another call.
/// - If a refresh fails while the old token has not actually expired yet, the old token is still used.
///
/// Every age decision reads the injected `TimePort`.
public actor GoogleOAuthTokenSource {
    struct AccessToken: Sendable {
        var value: String
        var refreshAt: Date
        var expiresAt: Date
    }

    private let account: ServiceAccount
    private let client: ProviderHTTPClient
    private let clock: any TimePort
    private let timeout: TimeAmount
    private let logger: Logger
    private let providerName: String

    /// The current token. Read without entering the actor, so that the common case (a fresh token) costs every
    /// request a lock, not a hop; written only by the actor.
    private nonisolated let current = Locked<AccessToken?>(nil)
    private var cached: AccessToken? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
    private var inFlight: Task<Result<AccessToken, DeliveryFailure>, Never>?
    /// How many times the token endpoint was called (for tests and diagnostics).
    public private(set) var tokenRequests = 0

    /// The longest PushRelay waits before refreshing: 5 minutes before expiry.
    static let refreshMargin: TimeInterval = 300

    init(account: ServiceAccount, client: ProviderHTTPClient, clock: any TimePort, timeout: TimeAmount, logger: Logger, providerName: String) {
        self.account = account
        self.client = client
        self.clock = clock
        self.timeout = timeout
        self.logger = logger
        self.providerName = providerName
    }

    /// A usable access token, from the cache or from one (shared) refresh.
    public nonisolated func accessToken() async throws(DeliveryFailure) -> String {
        if let c = current.withLock({ $0 }), clock.now() < c.refreshAt { return c.value }
        return try await refreshedToken()
    }

    private func refreshedToken() async throws(DeliveryFailure) -> String {
        if let c = cached, clock.now() < c.refreshAt { return c.value }
        return try await refresh()
    }

    /// FCM rejected `token` (401): fetch a new one, unless another caller already did.
    public func renew(after rejected: String) async throws(DeliveryFailure) -> String {
        if let c = cached, c.value != rejected, clock.now() < c.expiresAt { return c.value }
        if cached?.value == rejected { cached = nil }
        return try await refresh()
    }

    private func refresh() async throws(DeliveryFailure) -> String {
        let task: Task<Result<AccessToken, DeliveryFailure>, Never>
        if let running = inFlight {
            task = running
        } else {
            task = Task { await self.fetch() }
            inFlight = task
        }
        let result = await task.value
        if inFlight == task { inFlight = nil }
        switch result {
        case .success(let token):
            if cached.map({ $0.expiresAt < token.expiresAt }) ?? true { cached = token }
            return token.value
        case .failure(let failure):
            if let c = cached, clock.now() < c.expiresAt {
                logger.warning(
                    "OAuth token refresh failed; using the current token until it expires",
                    metadata: ["provider": "\(providerName)", "error": "\(failure.message)"]
                )
                return c.value
            }
            throw failure
        }
    }

    private func fetch() async -> Result<AccessToken, DeliveryFailure> {
        tokenRequests += 1
        let issuedAt = clock.now()
        let assertion: String
        do {
            assertion = try GoogleOAuthAssertion.make(for: account, now: issuedAt)
        } catch {
            return .failure(
                .configuration(message: "\(providerName): cannot sign the OAuth assertion with the service account key of \(account.clientEmail)")
            )
        }
        let headers = [(name: "content-type", value: "application/x-www-form-urlencoded"), (name: "accept", value: "application/json")]
        let body = ByteBuffer(string: GoogleOAuthAssertion.formBody(assertion: assertion))
        guard let request = UpstreamRequest(url: account.tokenURI, headers: headers, body: body) else {
            return .failure(.configuration(message: "\(providerName): the service account's token_uri is not an http(s) URL"))
        }
        let response: UpstreamResponse
        do {
            response = try await client.execute(request, timeout: timeout, providerName: providerName)
        } catch {
            return .failure(error)
        }
        return GoogleOAuthTokenResponse.interpret(response, issuedAt: issuedAt, account: account, providerName: providerName, now: clock.now())
    }
}

/// What the token endpoint's answer means.
enum GoogleOAuthTokenResponse {
    static func interpret(
        _ r: UpstreamResponse,
        issuedAt: Date,
        account: ServiceAccount,
        providerName: String,
        now: Date
    ) -> Result<GoogleOAuthTokenSource.AccessToken, DeliveryFailure> {
        let json = r.json
        if r.status == 200 {
            guard case .string(let token)? = json?["access_token"], !token.isEmpty else {
                return .failure(
                    .transient(
                        reason: "OAuthBadResponse",
                        message: "\(providerName): the OAuth token endpoint answered 200 without an access_token",
                        retryAfterSeconds: nil
                    )
                )
            }
            let lifetime = max(json?["expires_in"]?.doubleValue ?? 3600, 1)
            let margin = min(GoogleOAuthTokenSource.refreshMargin, lifetime / 2)
            return .success(
                .init(
                    value: token,
                    refreshAt: issuedAt.addingTimeInterval(lifetime - margin),
                    expiresAt: issuedAt.addingTimeInterval(lifetime)
                )
            )
        }
        let code = json?["error"]?.stringValue ?? "HTTP \(r.status)"
        let description = json?["error_description"]?.stringValue.map { " (\($0))" } ?? ""
        if r.status == 429 || r.status >= 500 {
            return .failure(
                .transient(
                    reason: "OAuthUnavailable",
                    message: "\(providerName): the OAuth token endpoint answered \(r.status) \(code)",
                    retryAfterSeconds: RetryAfter.seconds(r.header("retry-after"), now: now)
                )
            )
        }
        return .failure(
            .configuration(
                message:
                    "\(providerName): Google refused an access token for service account \(account.clientEmail): \(code)\(description). "
                    + (FCMRemedy.line(for: code, projectID: account.projectID ?? "")
                        ?? "Check that the key is current (not deleted in the Cloud console) and that this server's clock is correct.")
            )
        )
    }
}
