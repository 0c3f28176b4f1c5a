import Foundation
import PushRelayCore
import _CryptoExtras

/// The checks Google's token endpoint makes on a service-account JWT bearer grant. Pure.
enum FakeOAuthRules {
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let scopes: Set<String> = ["https://www.googleapis.com/auth/firebase.messaging", "https://www.googleapis.com/auth/cloud-platform"]

    struct Rejection: Error {
        var status: Int
        var error: String
        var description: String
    }

    /// Verifies a form body `grant_type=…&assertion=…` against the service account.
    static func check(formBody: [UInt8], clientEmail: String, publicKey: _RSA.Signing.PublicKey, audience: String, now: Date) throws(Rejection) {
        let form = parseForm(String(decoding: formBody, as: UTF8.self))
        guard form["grant_type"] == grantType else {
            throw Rejection(status: 400, error: "unsupported_grant_type", description: "Invalid grant_type: \(form["grant_type"] ?? "")")
        }
        guard let assertion = form["assertion"], let jwt = InspectedJWT(assertion) else {
            throw Rejection(status: 400, error: "invalid_request", description: "Invalid assertion format.")
        }
        guard jwt.verifiesRS256(with: publicKey) else {
            throw Rejection(status: 400, error: "invalid_grant", description: "Invalid JWT Signature.")
        }
        guard jwt.claims["iss"]?.stringValue == clientEmail else {
            throw Rejection(status: 400, error: "invalid_grant", description: "Invalid JWT: unknown issuer.")
        }
        guard jwt.claims["aud"]?.stringValue == audience else {
            throw Rejection(status: 400, error: "invalid_grant", description: "Invalid JWT audience.")
        }
        let scopes = Set((jwt.claims["scope"]?.stringValue ?? "").split(separator: " ").map(String.init))
        guard !scopes.isDisjoint(with: Self.scopes) else {
            throw Rejection(status: 400, error: "invalid_scope", description: "Invalid OAuth scope or ID token audience provided.")
        }
        guard let iat = jwt.wholeSeconds("iat"), let exp = jwt.wholeSeconds("exp") else {
            throw Rejection(status: 400, error: "invalid_grant", description: "Invalid JWT: iat and exp must be whole seconds.")
        }
        let nowSeconds = now.timeIntervalSince1970
        guard exp > iat, exp - iat <= 3600, Double(exp) > nowSeconds, Double(iat) <= nowSeconds + 300 else {
            throw Rejection(
                status: 400,
                error: "invalid_grant",
                description:
                    "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
            )
        }
    }

    static func parseForm(_ s: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in s.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = decode(kv[0])
            out[key] = kv.count > 1 ? decode(kv[1]) : ""
        }
        return out
    }

    static func decode(_ s: Substring) -> String {
        s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s)
    }
}
