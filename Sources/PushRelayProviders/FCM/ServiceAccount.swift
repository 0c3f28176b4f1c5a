import Foundation
import PushRelayCore
import _CryptoExtras

/// A Google service-account key (the JSON file downloaded from the Firebase console), reduced to what FCM needs.
///
/// The private key is parsed once and never written to logs or error messages.
public struct ServiceAccount: Sendable {
    /// `project_id`: the default FCM project (`/v1/projects/{project_id}/messages:send`).
    public var projectID: String?
    /// `client_email`: the JWT assertion's issuer (`iss`).
    public var clientEmail: String
    /// `private_key_id`: written as the assertion's `kid` so Google picks the right public key.
    public var privateKeyID: String?
    /// `token_uri`: where the assertion is exchanged for an access token (also the assertion's `aud`).
    public var tokenURI: String
    /// `private_key`: RSA (PKCS#8 or PKCS#1 PEM), signs the assertion (RS256).
    let privateKey: _RSA.Signing.PrivateKey

    /// Parses the service-account JSON. `key` is the option it came from, for error messages.
    public static func parse(_ text: String, key: String) throws(ProviderConfigError) -> ServiceAccount {
        guard case .object(let o)? = try? JSONParser.parse(text) else {
            throw ProviderConfigError(
                key: key,
                problem:
                    "is not a JSON object: expected the service-account key file from the Firebase console (Project settings → Service accounts → Generate new private key)"
            )
        }
        func field(_ name: String, required: Bool) throws(ProviderConfigError) -> String? {
            switch o[name] {
            case .string(let s)? where !s.isEmpty: return s
            case nil, .null?, .string?:
                if required { throw ProviderConfigError(key: key, problem: "has no '\(name)': is this a service-account key file?") }
                return nil
            default:
                throw ProviderConfigError(key: key, problem: "'\(name)' must be a string")
            }
        }
        if let type = try field("type", required: false), type != "service_account" {
            throw ProviderConfigError(key: key, problem: "'type' is '\(type)', expected 'service_account'")
        }
        let email = try field("client_email", required: true) ?? ""
        let tokenURI = try field("token_uri", required: false) ?? "https://oauth2.googleapis.com/token"
        guard tokenURI.hasPrefix("https://") || tokenURI.hasPrefix("http://") else {
            throw ProviderConfigError(key: key, problem: "'token_uri' must be an http(s) URL")
        }
        let pem = try field("private_key", required: true) ?? ""
        let privateKey: _RSA.Signing.PrivateKey
        do {
            privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw ProviderConfigError(key: key, problem: "'private_key' is not an RSA private key in PEM form (2048 bits or more)")
        }
        return ServiceAccount(
            projectID: try field("project_id", required: false),
            clientEmail: email,
            privateKeyID: try field("private_key_id", required: false),
            tokenURI: tokenURI,
            privateKey: privateKey
        )
    }
}
