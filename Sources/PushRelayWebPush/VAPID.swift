import Crypto
import Foundation
import PushRelayCore

/// VAPID (RFC 8292): the application server identifies itself to push services with an ES256 JWT.
///
/// `Authorization: vapid t=<JWT>, k=<base64url uncompressed public key>`, where the JWT's claims are `aud` (the push
/// service's origin), `exp` (whole seconds, at most 24 h ahead) and `sub` (a `mailto:` or `https:` contact).
public struct VAPIDSigner: Sendable {
    public let key: P256.Signing.PrivateKey
    /// `sub`: `mailto:admin@example.com`.
    public let subject: String
    /// How far ahead `exp` is set (RFC 8292 allows at most 24 h; push services reject more).
    public let lifetimeSeconds: Int64
    /// The `applicationServerKey` browsers subscribe with: the public key, uncompressed, base64url.
    public let applicationServerKey: String

    public init(key: P256.Signing.PrivateKey, contact: String, lifetimeSeconds: Int64 = 12 * 3600) {
        self.key = key
        self.subject = VAPIDSigner.subject(for: contact)
        self.lifetimeSeconds = min(max(lifetimeSeconds, 60), 24 * 3600)
        self.applicationServerKey = Base64URL.encode(key.publicKey.x963Representation)
    }

    /// `mailto:` is added to a bare e-mail address; `mailto:` and `https:` contacts are kept as they are.
    public static func subject(for contact: String) -> String {
        let c = contact.trimmingCharacters(in: .whitespaces)
        if c.lowercased().hasPrefix("mailto:") || c.lowercased().hasPrefix("https:") { return c }
        return "mailto:" + c
    }

    /// A JWT for one push service origin (`https://host[:port]`), valid from `now` for `lifetimeSeconds`.
    public func token(audience: String, now: Date) -> (jwt: String, expires: Int64) {
        let exp = Int64(now.timeIntervalSince1970.rounded(.down)) + lifetimeSeconds
        let header = #"{"typ":"JWT","alg":"ES256"}"#
        let claims = JSONWriter.string(["aud": .string(audience), "exp": .int(exp), "sub": .string(subject)])
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        // Signing with a valid P-256 key does not fail.
        let signature = try! key.signature(for: Array(signingInput.utf8))
        return (signingInput + "." + Base64URL.encode(signature.rawRepresentation), exp)
    }

    /// The `Authorization` header value for a token.
    public func authorization(jwt: String) -> String {
        "vapid t=\(jwt), k=\(applicationServerKey)"
    }

    /// The origin a push endpoint's JWT must name: `scheme://host`, plus `:port` when it is not the default.
    public static func audience(forEndpoint endpoint: String) -> String? {
        guard let url = URLComponents(string: endpoint), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else { return nil }
        var origin = "\(scheme)://\(host.lowercased())"
        if let port = url.port, !(scheme == "https" && port == 443) && !(scheme == "http" && port == 80) { origin += ":\(port)" }
        return origin
    }
}

/// VAPID keys as files: PKCS#8 or SEC1 PEM (what `vapid --gen` and `openssl ecparam` write), or raw base64url.
public enum VAPIDKey {
    /// A new key and its PKCS#8 PEM.
    public static func generate() -> (key: P256.Signing.PrivateKey, pem: String) {
        let key = P256.Signing.PrivateKey()
        return (key, key.pemRepresentation)
    }

    /// Reads a private key from PEM text (PKCS#8 or SEC1 "EC PRIVATE KEY") or a base64url raw 32-byte scalar.
    public static func parse(_ text: String) -> P256.Signing.PrivateKey? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.contains("-----BEGIN") {
            return try? P256.Signing.PrivateKey(pemRepresentation: trimmed)
        }
        guard let raw = Base64URL.decode(trimmed) else { return nil }
        if raw.count == 32 { return try? P256.Signing.PrivateKey(rawRepresentation: raw) }
        return try? P256.Signing.PrivateKey(derRepresentation: raw)
    }
}
