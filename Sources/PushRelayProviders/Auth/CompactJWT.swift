import Crypto
import Foundation
import PushRelayCore
import _CryptoExtras

/// Compact JWS (`header.claims.signature`, base64url without padding) for the two provider tokens PushRelay signs:
/// the APNs provider token (ES256) and the Google OAuth assertion (RS256).
///
/// Claims are written by `JSONWriter`, so `iat`/`exp` built as `.int` stay whole seconds (Google and Apple reject
/// or mis-read fractional timestamps, which is what a `Date`-based JWT library writes).
enum CompactJWT {
    enum SigningError: Error { case rsaFailed }

    static func es256(header: JSONValue, claims: JSONValue, key: P256.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + base64URL(signature.rawRepresentation)
    }

    static func rs256(header: JSONValue, claims: JSONValue, key: _RSA.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(signature.rawRepresentation)
    }

    static func signingInput(header: JSONValue, claims: JSONValue) -> String {
        base64URL(JSONWriter.bytes(header)) + "." + base64URL(JSONWriter.bytes(claims))
    }

    static func base64URL<D: DataProtocol>(_ bytes: D) -> String {
        var s = Data(bytes).base64EncodedString()
        s = s.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while s.hasSuffix("=") { s.removeLast() }
        return s
    }

    /// Whole Unix seconds (rounded down) for `iat`/`exp`.
    static func unixSeconds(_ date: Date) -> Int64 {
        let t = date.timeIntervalSince1970
        guard t.isFinite else { return 0 }
        return Int64(t.rounded(.down))
    }
}
