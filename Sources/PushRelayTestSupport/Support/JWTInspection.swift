import Crypto
import Foundation
import PushRelayCore
import _CryptoExtras

/// A compact JWS split into its parts, as the fakes check it. Independent of the provider code that signs.
public struct InspectedJWT: Sendable {
    public let header: JSONValue
    public let claims: JSONValue
    /// `header.claims`, the signed bytes.
    let signingInput: [UInt8]
    let signature: [UInt8]
    /// The raw claims JSON text (to check that `iat`/`exp` are written as whole numbers).
    public let claimsText: String

    /// Nil when `token` is not three base64url parts of which the first two are JSON objects.
    public init?(_ token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let h = InspectedJWT.base64URLDecode(parts[0]), let c = InspectedJWT.base64URLDecode(parts[1]),
            let s = InspectedJWT.base64URLDecode(parts[2]),
            case .object? = try? JSONParser.parse(h), case .object? = try? JSONParser.parse(c),
            let header = try? JSONParser.parse(h), let claims = try? JSONParser.parse(c)
        else { return nil }
        self.header = header
        self.claims = claims
        self.signingInput = Array((parts[0] + "." + parts[1]).utf8)
        self.signature = s
        self.claimsText = String(decoding: c, as: UTF8.self)
    }

    public func verifiesES256(with key: P256.Signing.PublicKey) -> Bool {
        guard header["alg"]?.stringValue == "ES256",
            let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return key.isValidSignature(sig, for: Data(signingInput))
    }

    public func verifiesRS256(with key: _RSA.Signing.PublicKey) -> Bool {
        guard header["alg"]?.stringValue == "RS256" else { return false }
        return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: Data(signingInput), padding: .insecurePKCS1v1_5)
    }

    /// A claim that must be a whole number of seconds (`.int`, not `1.5` or `1.0e9`).
    public func wholeSeconds(_ claim: String) -> Int64? {
        if case .int(let i)? = claims[claim] { return i }
        return nil
    }

    static func base64URLDecode<S: StringProtocol>(_ s: S) -> [UInt8]? {
        var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while t.count % 4 != 0 { t += "=" }
        return Data(base64Encoded: t).map(Array.init)
    }
}
