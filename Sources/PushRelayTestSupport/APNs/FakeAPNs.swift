import Crypto
import Foundation
import NIOCore
import PushRelayCore
import PushRelayEventLoopClock

/// A strict, in-process APNs: HTTP/2 over TLS on loopback, with a certificate from a test CA.
///
/// It checks what Apple checks (path, headers, push type vs payload, sizes, the provider JWT's signature, `kid`,
/// `iss` and age, provider-token changes per connection), answers per-device-token scripts, and records every
/// request with its answer. Token ages and the 20-minute change window read the injected clock.
public final class FakeAPNs: Sendable {
    /// How the fake authenticates PushRelay.
    public enum Authentication: Sendable {
        /// Provider JWTs signed by this key, with this `kid` and `iss`.
        case token(keyID: String, teamID: String, publicKey: P256.Signing.PublicKey)
        /// A TLS client certificate issued by this CA; the JWT is ignored.
        case certificate(clientCA: TestCertificateAuthority)
    }

    /// The app's bundle id: the accepted `apns-topic` (with the per-push-type suffixes).
    public let bundleID: String
    public let authority: TestCertificateAuthority
    private let authentication: Authentication
    private let clock: any TimePort
    private let sandbox: Bool
    private let state = Locked(State())
    private let slot = FakeServerSlot()
    /// What Apple's front end does to the connections besides answering (`FakeFrontEnd`): off until set.
    public let frontEnd = FakeFrontEnd()

    struct State {
        var records: [FakeAPNsRecord] = []
        var scripts: [String: [FakeAPNsOutcome]] = [:]
        var tokenHistory: [Int: TokenHistory] = [:]
    }

    /// Provider tokens seen on one connection.
    struct TokenHistory {
        var current: String?
        var changes: [Date] = []
    }

    /// - Parameters:
    ///   - authority: issues the server certificate; clients trust its `certificatePEM`.
    ///   - sandbox: answers also carry `apns-unique-id`, as the sandbox does.
    public init(
        authority: TestCertificateAuthority,
        authentication: Authentication,
        bundleID: String,
        clock: any TimePort = EventLoopClock(),
        sandbox: Bool = false
    ) {
        self.authority = authority
        self.authentication = authentication
        self.bundleID = bundleID
        self.clock = clock
        self.sandbox = sandbox
    }

    /// Token authentication with `key`.
    public convenience init(authority: TestCertificateAuthority, key: TestAPNsKey, bundleID: String, clock: any TimePort = EventLoopClock()) {
        self.init(
            authority: authority,
            authentication: .token(keyID: key.keyID, teamID: key.teamID, publicKey: key.publicKey),
            bundleID: bundleID,
            clock: clock
        )
    }

    /// Listens on `127.0.0.1:port` (0 picks a free port).
    public func start(port: Int = 0) async throws {
        var clientCA: TestCertificateAuthority?
        if case .certificate(let ca) = authentication { clientCA = ca }
        let server = try FakeTLSServer(
            identity: try authority.issueServerCertificate(),
            clientCA: clientCA,
            allowHTTP1: false,
            frontEnd: frontEnd
        ) { [self] request in
            self.handle(request)
        }
        try await slot.start(server, port: port)
    }

    /// The bound port (after `start`).
    public var port: Int { slot.port }
    /// `https://127.0.0.1:<port>`: the provider's `endpoint`.
    public var endpoint: String { "https://127.0.0.1:\(port)" }
    /// How many TCP connections clients opened.
    public var acceptedConnections: Int { slot.acceptedConnections }

    public func shutdown() async {
        await slot.shutdown()
    }

    /// Answers the next requests for `deviceToken` with `outcomes`, in order; afterwards requests succeed again.
    public func script(_ deviceToken: String, _ outcomes: [FakeAPNsOutcome]) {
        state.withLock { $0.scripts[deviceToken.lowercased(), default: []] += outcomes }
    }

    /// Every request received so far, in arrival order.
    public var records: [FakeAPNsRecord] { state.withLock { $0.records } }
    /// The records so far, removed from the fake (for a long run: `records` keeps every one, and copying them
    /// would hold up the requests).
    public func takeRecords() -> [FakeAPNsRecord] {
        state.withLock { s in
            defer { s.records = [] }
            return s.records
        }
    }

    /// Forgets records and scripts (not connections).
    public func reset() {
        state.withLock {
            $0.records = []
            $0.scripts = [:]
        }
    }

    // MARK: - Handling

    private func handle(_ request: FakeRequest) -> FakeResponse {
        let now = clock.now()
        let apnsID = request.header("apns-id").flatMap { FakeAPNsRules.isCanonicalUUID($0) ? $0 : nil } ?? UUID().uuidString.lowercased()
        var deviceToken: String?
        let decision: Result<FakeAPNsOutcome, FakeAPNsRules.Rejection> = state.withLock { state in
            do throws(FakeAPNsRules.Rejection) {
                guard request.method == "POST" else { throw FakeAPNsRules.Rejection(status: 405, reason: "MethodNotAllowed") }
                let token = try FakeAPNsRules.deviceToken(in: request.path)
                deviceToken = token
                try FakeAPNsRules.checkHeadersAndPayload(request, bundleID: bundleID)
                if case .token(let keyID, let teamID, let publicKey) = authentication {
                    let jwt = try FakeAPNsRules.checkProviderToken(request, keyID: keyID, teamID: teamID, publicKey: publicKey, now: now)
                    try Self.countTokenChange(jwt, connection: request.connectionID, now: now, state: &state)
                }
                if var queue = state.scripts[token], !queue.isEmpty {
                    let next = queue.removeFirst()
                    state.scripts[token] = queue
                    return .success(next)
                }
                return .success(.success)
            } catch {
                return .failure(error)
            }
        }

        var response: FakeResponse
        var recordedStatus: Int
        var recordedReason: String?
        switch decision {
        case .failure(let rejection):
            response = Self.error(rejection.status, rejection.reason, apnsID: apnsID)
            recordedStatus = rejection.status
            recordedReason = rejection.reason
        case .success(let outcome):
            (response, recordedStatus, recordedReason) = answer(outcome, apnsID: apnsID)
        }
        let record = FakeAPNsRecord(request: request, deviceToken: deviceToken, status: recordedStatus, reason: recordedReason)
        state.withLock { $0.records.append(record) }
        return response
    }

    private func answer(_ outcome: FakeAPNsOutcome, apnsID: String) -> (FakeResponse, Int, String?) {
        switch outcome {
        case .success:
            var headers = [("apns-id", apnsID)]
            if sandbox { headers.append(("apns-unique-id", UUID().uuidString.lowercased())) }
            return (FakeResponse(status: 200, headers: headers), 200, nil)
        case .unregistered(let since):
            let ms = since.epochMilliseconds
            return (FakeResponse.json(410, ["reason": "Unregistered", "timestamp": .int(ms)], headers: [("apns-id", apnsID)]), 410, "Unregistered")
        case .expiredToken:
            return (Self.error(410, "ExpiredToken", apnsID: apnsID), 410, "ExpiredToken")
        case .badDeviceToken:
            return (Self.error(400, "BadDeviceToken", apnsID: apnsID), 400, "BadDeviceToken")
        case .reject(let status, let reason, let retryAfter):
            var r = Self.error(status, reason, apnsID: apnsID)
            if let retryAfter { r.headers.append(("retry-after", String(retryAfter))) }
            return (r, status, reason)
        case .delayed(let ms, let inner):
            var (r, status, reason) = answer(inner, apnsID: apnsID)
            r.delay = .milliseconds(ms)
            return (r, status, reason)
        case .dropConnection:
            return (FakeResponse(status: 0, action: .dropConnection), 0, "DroppedConnection")
        case .resetStream:
            return (FakeResponse(status: 0, action: .resetStream), 0, "ResetStream")
        case .goAway:
            return (FakeResponse(status: 0, action: .goAway), 0, "GoAway")
        }
    }

    /// More than one provider-token change on a connection within 20 minutes → 429 TooManyProviderTokenUpdates.
    private static func countTokenChange(_ jwt: String, connection: Int, now: Date, state: inout State) throws(FakeAPNsRules.Rejection) {
        var history = state.tokenHistory[connection] ?? TokenHistory()
        defer { state.tokenHistory[connection] = history }
        guard let current = history.current else {
            history.current = jwt
            return
        }
        guard current != jwt else { return }
        history.current = jwt
        history.changes = history.changes.filter { now.timeIntervalSince($0) < 20 * 60 } + [now]
        if history.changes.count > 1 { throw FakeAPNsRules.Rejection(status: 429, reason: "TooManyProviderTokenUpdates") }
    }

    static func error(_ status: Int, _ reason: String, apnsID: String) -> FakeResponse {
        FakeResponse.json(status, ["reason": .string(reason)], headers: [("apns-id", apnsID)])
    }
}
