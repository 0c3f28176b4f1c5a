import Foundation
import NIOCore
import PushRelayCore
import PushRelayEventLoopClock

/// A strict, in-process FCM HTTP v1 API with its OAuth token endpoint: HTTPS (HTTP/2 or HTTP/1.1) on loopback,
/// with a certificate from a test CA.
///
/// - `POST /token`: verifies the RS256 assertion against the service account's public key (`iss`, `aud`, `scope`,
///   whole-second `iat`/`exp` at most an hour apart) and issues opaque access tokens that expire after
///   `accessTokenLifetime` seconds of the injected clock.
/// - `POST /v1/projects/{project}/messages:send`: a live bearer token (else 401 UNAUTHENTICATED), the message rules
///   of `FakeFCMRules`, then the per-token script.
///
/// Every send request is recorded with its answer; token-endpoint calls are counted.
public final class FakeFCM: Sendable {
    public let authority: TestCertificateAuthority
    public let account: TestServiceAccount
    private let clock: any TimePort
    private let state: Locked<State>
    private let slot = FakeServerSlot()
    /// What Google's front end does to the connections besides answering (`FakeFrontEnd`): off until set.
    public let frontEnd = FakeFrontEnd()

    struct State {
        var accessTokenLifetime: Int
        var issued: [String: Date] = [:]
        var tokenRequests = 0
        var oauthFailures: [FakeOAuthFailure] = []
        var records: [FakeFCMRecord] = []
        var scripts: [String: [FakeFCMOutcome]] = [:]
        var messageCounter = 0
    }

    public init(
        authority: TestCertificateAuthority,
        account: TestServiceAccount,
        clock: any TimePort = EventLoopClock(),
        accessTokenLifetime: Int = 3599
    ) {
        self.authority = authority
        self.account = account
        self.clock = clock
        self.state = Locked(State(accessTokenLifetime: accessTokenLifetime))
    }

    /// Listens on `127.0.0.1:port` (0 picks a free port); `offerHTTP2: false` speaks only HTTP/1.1.
    public func start(port: Int = 0, offerHTTP2: Bool = true) async throws {
        let server = try FakeTLSServer(
            identity: try authority.issueServerCertificate(),
            clientCA: nil,
            allowHTTP1: true,
            offerHTTP2: offerHTTP2,
            frontEnd: frontEnd
        ) { [self] request in
            self.handle(request)
        }
        try await slot.start(server, port: port)
    }

    public var port: Int { slot.port }
    /// `https://127.0.0.1:<port>`: the provider's `endpoint`.
    public var endpoint: String { "https://127.0.0.1:\(port)" }
    /// The service account's `token_uri`.
    public var tokenURI: String { endpoint + "/token" }
    /// The service-account JSON pointing at this fake.
    public var serviceAccountJSON: String { account.json(tokenURI: tokenURI) }
    public var acceptedConnections: Int { slot.acceptedConnections }

    public func shutdown() async {
        await slot.shutdown()
    }

    // MARK: - Scripting and inspection

    /// Answers the next sends to `token` with `outcomes`, in order; afterwards sends succeed again.
    public func script(_ token: String, _ outcomes: [FakeFCMOutcome]) {
        state.withLock { $0.scripts[token, default: []] += outcomes }
    }

    /// The next token-endpoint calls fail like this, in order.
    public func failTokenRequests(_ failures: [FakeOAuthFailure]) {
        state.withLock { $0.oauthFailures += failures }
    }

    /// Invalidates every issued access token (the next send with one gets 401).
    public func revokeAccessTokens() {
        state.withLock { $0.issued = [:] }
    }

    /// Every `messages:send` request so far, in arrival order.
    public var records: [FakeFCMRecord] { state.withLock { $0.records } }
    /// The records so far, removed from the fake (for a long run: `records` keeps every one, and copying them
    /// would hold up the requests).
    public func takeRecords() -> [FakeFCMRecord] {
        state.withLock { s in
            defer { s.records = [] }
            return s.records
        }
    }
    /// How many times the token endpoint was called.
    public var tokenRequests: Int { state.withLock { $0.tokenRequests } }

    public func reset() {
        state.withLock {
            $0.records = []
            $0.scripts = [:]
        }
    }

    // MARK: - Handling

    private func handle(_ request: FakeRequest) -> FakeResponse {
        if request.path == "/token" { return handleToken(request) }
        return handleSend(request)
    }

    private func handleToken(_ request: FakeRequest) -> FakeResponse {
        let now = clock.now()
        return state.withLock { state -> FakeResponse in
            state.tokenRequests += 1
            guard request.method == "POST" else { return .json(405, ["error": "invalid_request"]) }
            if !state.oauthFailures.isEmpty {
                switch state.oauthFailures.removeFirst() {
                case .invalidGrant:
                    return .json(400, ["error": "invalid_grant", "error_description": "Invalid grant: account not found"])
                case .unavailable:
                    return .json(503, ["error": "backend_error"], headers: [("retry-after", "1")])
                case .hang(let ms):
                    var r = FakeResponse.json(503, ["error": "backend_error"])
                    r.delay = .milliseconds(ms)
                    return r
                }
            }
            do throws(FakeOAuthRules.Rejection) {
                try FakeOAuthRules.check(
                    formBody: request.body,
                    clientEmail: account.clientEmail,
                    publicKey: account.publicKey,
                    audience: tokenURI,
                    now: now
                )
            } catch {
                return .json(error.status, ["error": .string(error.error), "error_description": .string(error.description)])
            }
            let token = "ya29.fake-\(state.tokenRequests)-\(UUID().uuidString.lowercased().prefix(8))"
            state.issued[token] = now.addingTimeInterval(TimeInterval(state.accessTokenLifetime))
            return .json(200, ["access_token": .string(token), "expires_in": .int(Int64(state.accessTokenLifetime)), "token_type": "Bearer"])
        }
    }

    private func handleSend(_ request: FakeRequest) -> FakeResponse {
        let now = clock.now()
        let projectID = account.projectID
        return state.withLock { state -> FakeResponse in
            let outcome: FakeFCMOutcome
            do throws(FakeFCMErrors.Rejection) {
                let prefix = "/v1/projects/"
                let suffix = "/messages:send"
                guard request.method == "POST", request.path.hasPrefix(prefix), request.path.hasSuffix(suffix) else {
                    throw .init(404, "NOT_FOUND", "Not found: \(request.method) \(request.path)")
                }
                let project = request.path.dropFirst(prefix.count).dropLast(suffix.count)
                guard let auth = request.header("authorization"), auth.hasPrefix("Bearer "),
                    let expiry = state.issued[String(auth.dropFirst(7))], now < expiry
                else {
                    throw .init(
                        401,
                        "UNAUTHENTICATED",
                        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
                    )
                }
                guard project == projectID else {
                    throw .init(
                        403,
                        "PERMISSION_DENIED",
                        "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist)."
                    )
                }
                guard request.header("content-type")?.lowercased().hasPrefix("application/json") == true else {
                    throw .init(400, "INVALID_ARGUMENT", "Invalid JSON payload received. Content-Type must be application/json.")
                }
                let token = try FakeFCMRules.check(request.body)
                if var queue = state.scripts[token], !queue.isEmpty {
                    outcome = queue.removeFirst()
                    state.scripts[token] = queue
                } else {
                    outcome = .success
                }
            } catch {
                state.records.append(FakeFCMRecord(request: request, status: error.response.status, reason: error.reason))
                return error.response
            }
            let (response, reason) = answer(outcome, projectID: projectID, state: &state)
            state.records.append(FakeFCMRecord(request: request, status: response.status, reason: reason))
            return response
        }
    }

    /// 429 RESOURCE_EXHAUSTED with errorCode QUOTA_EXCEEDED: FCM's answer to the project's quota and to one device's
    /// rate alike, told apart only by `message`.
    private static func quotaExceeded(_ message: String, retryAfter: Int?) -> (FakeResponse, String?) {
        (
            FakeFCMErrors.response(code: 429, status: "RESOURCE_EXHAUSTED", message: message, errorCode: "QUOTA_EXCEEDED", retryAfter: retryAfter),
            "QUOTA_EXCEEDED"
        )
    }

    private func answer(_ outcome: FakeFCMOutcome, projectID: String, state: inout State) -> (FakeResponse, String?) {
        switch outcome {
        case .success:
            state.messageCounter += 1
            let id =
                "0:\(1_700_000_000_000 + state.messageCounter)%\(UUID().uuidString.lowercased().prefix(16).replacingOccurrences(of: "-", with: ""))"
            return (.json(200, ["name": .string("projects/\(projectID)/messages/\(id)")]), nil)
        case .unregistered:
            return (
                FakeFCMErrors.response(code: 404, status: "NOT_FOUND", message: "Requested entity was not found.", errorCode: "UNREGISTERED"),
                "UNREGISTERED"
            )
        case .invalidToken:
            return (
                FakeFCMErrors.response(
                    code: 400,
                    status: "INVALID_ARGUMENT",
                    message: "The registration token is not a valid FCM registration token",
                    errorCode: "INVALID_ARGUMENT"
                ), "INVALID_ARGUMENT"
            )
        case .senderIDMismatch:
            return (
                FakeFCMErrors.response(code: 403, status: "PERMISSION_DENIED", message: "SenderId mismatch", errorCode: "SENDER_ID_MISMATCH"),
                "SENDER_ID_MISMATCH"
            )
        case .quotaExceeded(let retryAfter):
            return Self.quotaExceeded("Quota exceeded for quota metric 'Send requests'.", retryAfter: retryAfter)
        case .deviceRateExceeded(let retryAfter):
            return Self.quotaExceeded("Device message rate exceeded.", retryAfter: retryAfter)
        case .unavailable(let retryAfter):
            return (
                FakeFCMErrors.response(
                    code: 503,
                    status: "UNAVAILABLE",
                    message: "The service is currently unavailable.",
                    errorCode: "UNAVAILABLE",
                    retryAfter: retryAfter
                ), "UNAVAILABLE"
            )
        case .internalError:
            return (FakeFCMErrors.response(code: 500, status: "INTERNAL", message: "Internal error encountered.", errorCode: "INTERNAL"), "INTERNAL")
        case .thirdPartyAuthError:
            return (
                FakeFCMErrors.response(
                    code: 401,
                    status: "UNAUTHENTICATED",
                    message: "Auth error from APNS or Web Push Service",
                    errorCode: "THIRD_PARTY_AUTH_ERROR"
                ), "THIRD_PARTY_AUTH_ERROR"
            )
        case .unauthenticated:
            return (
                FakeFCMErrors.response(
                    code: 401,
                    status: "UNAUTHENTICATED",
                    message: "Request had invalid authentication credentials.",
                    errorCode: nil
                ), "UNAUTHENTICATED"
            )
        case .delayed(let ms, let inner):
            var (r, reason) = answer(inner, projectID: projectID, state: &state)
            r.delay = .milliseconds(ms)
            return (r, reason)
        case .dropConnection:
            return (FakeResponse(status: 0, action: .dropConnection), "DroppedConnection")
        case .malformedBody(let status):
            return (
                FakeResponse(status: status, headers: [("content-type", "application/json")], body: Array("<html>upstream error</h".utf8)),
                "MalformedBody"
            )
        }
    }
}
