import Foundation
import PushRelayCore

/// The RS256 JWT a service account signs to obtain an access token (RFC 7523 JWT bearer grant).
enum GoogleOAuthAssertion {
    /// The only scope PushRelay asks for: sending FCM messages.
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Google accepts assertions valid for at most one hour.
    static let lifetimeSeconds: Int64 = 3600

    /// `{alg: RS256, typ: JWT, kid}` / `{iss, scope, aud, iat, exp}` with whole-second `iat`/`exp`.
    static func make(for account: ServiceAccount, now: Date) throws -> String {
        let iat = CompactJWT.unixSeconds(now)
        var header: [String: JSONValue] = ["alg": "RS256", "typ": "JWT"]
        if let kid = account.privateKeyID { header["kid"] = .string(kid) }
        let claims: JSONValue = [
            "iss": .string(account.clientEmail),
            "scope": .string(scope),
            "aud": .string(account.tokenURI),
            "iat": .int(iat),
            "exp": .int(iat + lifetimeSeconds),
        ]
        return try CompactJWT.rs256(header: .object(header), claims: claims, key: account.privateKey)
    }

    /// `grant_type=…jwt-bearer&assertion=…`, form-encoded.
    static func formBody(assertion: String) -> String {
        "grant_type=" + formEncode("urn:ietf:params:oauth:grant-type:jwt-bearer") + "&assertion=" + formEncode(assertion)
    }

    static func formEncode(_ s: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s
    }
}
