import Crypto
import Foundation
import PushRelayCore
import PushRelayEventLoopClock
import PushRelayWebPush

/// A browser subscription at the fake push service: what a browser hands the app after `pushManager.subscribe`.
public struct FakeWebPushSubscription: Sendable {
    public var id: String
    /// `https://127.0.0.1:<port>/push/<id>`.
    public var endpoint: String
    /// `keys.p256dh`, base64url: the Matrix pushkey.
    public var p256dh: String
    /// `keys.auth`, base64url.
    public var auth: String
    /// The browser's private key (what only the browser has), as raw base64url: for independent decryption in tests.
    public var privateKeyRaw: String
    let privateKey: P256.KeyAgreement.PrivateKey
}

/// What the fake push service answers for a subscription once the request passed its checks.
public enum FakeWebPushOutcome: Sendable {
    /// 201 Created with a `Location`.
    case success
    /// 410 Gone: the subscription expired or was unsubscribed.
    case gone
    /// 404 Not Found.
    case notFound
    /// 429 with `Retry-After`.
    case tooManyRequests(retryAfter: Int?)
    /// 503 with `Retry-After`.
    case unavailable(retryAfter: Int?)
}

/// One request the fake push service received, decrypted, with what it answered.
public struct FakeWebPushRecord: Sendable {
    public var subscriptionID: String?
    public var method: String
    public var path: String
    public var headers: [String: String]
    /// The encrypted body as received.
    public var rawBody: [UInt8]
    /// The decrypted message, when it decrypted.
    public var plaintext: [UInt8]?
    public var status: Int
    /// Why the request was refused, when it was.
    public var problem: String?

    public var json: JSONValue? { plaintext.flatMap { try? JSONParser.parse($0) } }
}

/// A strict in-process WebPush service (RFC 8030) on loopback HTTPS: checks VAPID (RFC 8292: ES256 JWT with the
/// right `aud`, whole-second `exp` within 24 h, a `mailto:`/`https:` `sub`, and the expected `k`), the `TTL`,
/// `Urgency` and `Topic` headers and the 4096-byte limit, then decrypts the `aes128gcm` body (RFC 8291) with the
/// subscription's private key. Subscriptions can be scripted to answer 404/410/429/503.
public final class FakeWebPush: Sendable {
    public let authority: TestCertificateAuthority
    private let expectedKey: P256.Signing.PublicKey?
    private let clock: any TimePort
    private let state = Locked(State())
    private let slot = FakeServerSlot()

    struct State {
        var subscriptions: [String: FakeWebPushSubscription] = [:]
        var scripts: [String: [FakeWebPushOutcome]] = [:]
        var records: [FakeWebPushRecord] = []
        var counter = 0
    }

    /// - Parameter vapidPublicKey: the application server key subscriptions were made with; requests signed with
    ///   another key get 403 (nil accepts any correctly signed key).
    public init(authority: TestCertificateAuthority, vapidPublicKey: P256.Signing.PublicKey? = nil, clock: any TimePort = EventLoopClock()) {
        self.authority = authority
        self.expectedKey = vapidPublicKey
        self.clock = clock
    }

    public func start(port: Int = 0) async throws {
        let server = try FakeTLSServer(identity: try authority.issueServerCertificate(), clientCA: nil, allowHTTP1: true) { [self] request in
            self.handle(request)
        }
        try await slot.start(server, port: port)
    }

    public var port: Int { slot.port }
    /// `https://127.0.0.1:<port>`.
    public var origin: String { "https://127.0.0.1:\(port)" }

    public func shutdown() async {
        await slot.shutdown()
    }

    /// A new subscription, as a browser would create it.
    public func subscribe() -> FakeWebPushSubscription {
        let key = P256.KeyAgreement.PrivateKey()
        let auth = (0..<16).map { _ in UInt8.random(in: 0...255) }
        return state.withLock { s in
            s.counter += 1
            let id = "sub\(s.counter)-\(UUID().uuidString.lowercased().prefix(8))"
            let sub = FakeWebPushSubscription(
                id: id,
                endpoint: "\(origin)/push/\(id)",
                p256dh: Base64URL.encode(key.publicKey.x963Representation),
                auth: Base64URL.encode(auth),
                privateKeyRaw: Base64URL.encode(key.rawRepresentation),
                privateKey: key
            )
            s.subscriptions[id] = sub
            return sub
        }
    }

    /// Answers the next pushes to a subscription with `outcomes`, in order; afterwards they succeed again.
    public func script(_ subscriptionID: String, _ outcomes: [FakeWebPushOutcome]) {
        state.withLock { $0.scripts[subscriptionID, default: []] += outcomes }
    }

    public var records: [FakeWebPushRecord] { state.withLock { $0.records } }
    /// The records so far, removed from the fake (for a long run: `records` keeps every one, and copying them
    /// would hold up the requests).
    public func takeRecords() -> [FakeWebPushRecord] {
        state.withLock { s in
            defer { s.records = [] }
            return s.records
        }
    }

    public func reset() {
        state.withLock {
            $0.records = []
            $0.scripts = [:]
        }
    }

    // MARK: - Handling

    private func handle(_ r: FakeRequest) -> FakeResponse {
        let now = clock.now()
        let expected = expectedKey
        return state.withLock { s -> FakeResponse in
            var record = FakeWebPushRecord(
                subscriptionID: nil,
                method: r.method,
                path: r.path,
                headers: r.headers,
                rawBody: r.body,
                plaintext: nil,
                status: 0,
                problem: nil
            )
            func refuse(_ status: Int, _ problem: String) -> FakeResponse {
                record.status = status
                record.problem = problem
                s.records.append(record)
                return .json(status, ["code": .int(Int64(status)), "error": .string(problem)])
            }
            let prefix = "/push/"
            guard r.path.hasPrefix(prefix) else { return refuse(404, "no such endpoint") }
            let id = String(r.path.dropFirst(prefix.count))
            record.subscriptionID = id
            guard let sub = s.subscriptions[id] else { return refuse(410, "no such subscription") }
            guard r.method == "POST" else { return refuse(405, "push messages are POSTed") }
            guard let ttl = r.header("ttl"), let ttlValue = Int(ttl), ttlValue >= 0 else { return refuse(400, "missing or invalid TTL header") }
            guard r.header("content-encoding")?.lowercased() == "aes128gcm" else { return refuse(415, "Content-Encoding must be aes128gcm") }
            if let u = r.header("urgency"), !["very-low", "low", "normal", "high"].contains(u) { return refuse(400, "invalid Urgency '\(u)'") }
            if let t = r.header("topic") {
                let ok = t.count <= 32 && t.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
                if !ok { return refuse(400, "invalid Topic '\(t)': at most 32 URL-safe base64 characters") }
            }
            if let problem = Self.checkVAPID(r.header("authorization"), audience: origin, expected: expected, now: now) {
                return refuse(problem.status, problem.reason)
            }
            guard r.body.count <= 4096 else { return refuse(413, "the message is \(r.body.count) bytes; the limit is 4096") }
            let auth = Base64URL.decode(sub.auth) ?? []
            do {
                record.plaintext = try WebPushEncryption.decrypt(r.body, receiverKey: sub.privateKey, auth: auth)
            } catch {
                return refuse(400, "\(error)")
            }
            var outcome = FakeWebPushOutcome.success
            if var queue = s.scripts[id], !queue.isEmpty {
                outcome = queue.removeFirst()
                s.scripts[id] = queue
            }
            let response: FakeResponse
            switch outcome {
            case .success:
                response = FakeResponse(status: 201, headers: [("location", "\(origin)/message/m\(s.records.count + 1)"), ("ttl", ttl)])
            case .gone:
                response = .json(410, ["code": 410, "error": "push subscription has unsubscribed or expired"])
            case .notFound:
                response = .json(404, ["code": 404, "error": "not found"])
            case .tooManyRequests(let after):
                response = .json(429, ["code": 429, "error": "too many requests"], headers: after.map { [("retry-after", String($0))] } ?? [])
            case .unavailable(let after):
                response = .json(503, ["code": 503, "error": "unavailable"], headers: after.map { [("retry-after", String($0))] } ?? [])
            }
            record.status = response.status
            s.records.append(record)
            return response
        }
    }

    /// RFC 8292 §3: `vapid t=<jwt>, k=<key>`.
    static func checkVAPID(_ header: String?, audience: String, expected: P256.Signing.PublicKey?, now: Date) -> (status: Int, reason: String)? {
        guard let header, header.lowercased().hasPrefix("vapid ") else { return (401, "missing 'Authorization: vapid t=…, k=…'") }
        var params: [String: String] = [:]
        for part in header.dropFirst(6).split(separator: ",") {
            let kv = part.trimmingCharacters(in: .whitespaces)
            guard let eq = kv.firstIndex(of: "=") else { continue }
            params[String(kv[..<eq]).lowercased()] = String(kv[kv.index(after: eq)...])
        }
        guard let t = params["t"], let k = params["k"] else { return (401, "the vapid authorization needs both t and k") }
        guard let raw = Base64URL.decode(k), let key = try? P256.Signing.PublicKey(x963Representation: raw) else {
            return (401, "k is not an uncompressed P-256 public key")
        }
        if let expected, expected.x963Representation != key.x963Representation {
            return (403, "k is not the application server key the subscription was made with")
        }
        guard let jwt = InspectedJWT(t), jwt.verifiesES256(with: key) else { return (401, "the VAPID JWT is not signed with k (ES256)") }
        guard jwt.claims["aud"]?.stringValue == audience else { return (401, "aud must be the push service origin \(audience)") }
        guard let exp = jwt.wholeSeconds("exp") else { return (401, "exp must be whole seconds") }
        let nowSeconds = Int64(now.timeIntervalSince1970)
        guard exp > nowSeconds, exp <= nowSeconds + 86_400 else { return (401, "exp must be in the future and at most 24 h ahead") }
        guard let sub = jwt.claims["sub"]?.stringValue, sub.hasPrefix("mailto:") || sub.hasPrefix("https:") else {
            return (401, "sub must be a mailto: or https: contact")
        }
        return nil
    }
}
