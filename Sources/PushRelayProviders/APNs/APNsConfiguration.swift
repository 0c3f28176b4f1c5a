import Crypto
import Foundation
import NIOCore
import PushRelayCore

extension APNsProvider {
    /// How PushRelay proves to APNs that it may push to `topic`.
    public enum Authentication: Sendable {
        /// Token-based: an ES256 provider JWT signed with the `.p8` key (`key_file`), with `kid` = `key_id` and
        /// `iss` = `team_id`, sent as `authorization: bearer …` and shared by every request.
        case token(keyID: String, teamID: String, key: P256.Signing.PrivateKey)
        /// Certificate-based: the TLS client certificate (`cert_file` + `cert_key_file`) identifies the app.
        case certificate
    }

    /// Which APNs environment the app's device tokens belong to.
    public enum Environment: String, Sendable {
        /// `api.push.apple.com`: App Store and TestFlight builds.
        case production
        /// `api.sandbox.push.apple.com`: builds signed with a development profile.
        case sandbox

        /// `https://<host>` of the environment.
        public var endpoint: String {
            switch self {
            case .production: return "https://api.push.apple.com"
            case .sandbox: return "https://api.sandbox.push.apple.com"
            }
        }
    }

    /// The options of a `type: apns` provider.
    ///
    /// ```yaml
    /// providers:
    ///   ios:
    ///     type: apns
    ///     key_file: AuthKey_ABCDE12345.p8    # token auth (or cert_file + cert_key_file)
    ///     key_id: ABCDE12345
    ///     team_id: TEAM123456
    ///     topic: io.robbie.HomeAssistant
    ///     environment: production            # or sandbox
    ///     endpoint: https://127.0.0.1:8443   # tests only; overrides environment
    ///     ca_file: /path/extra-ca.pem        # tests only
    ///     max_connections: 4
    ///     request_timeout_ms: 5000
    /// ```
    public struct Configuration: ProviderConfiguration {
        /// Token or certificate authentication.
        public var authentication: Authentication
        /// `topic`: the app's bundle id. Sent as `apns-topic`, with `.voip`, `.complication`, `.pushkit.fileprovider`
        /// or `.push-type.liveactivity` appended for those push types.
        public var topic: String
        /// `environment`: production (default) or sandbox.
        public var environment: Environment
        /// `endpoint` if given, else the environment's host; scheme, host and port only.
        public var endpoint: String
        /// `max_connections`: HTTP/1.1 connections per host; APNs speaks HTTP/2, multiplexed on one long-lived connection.
        public var maxConnections: Int
        /// `request_timeout_ms`: one upstream exchange, connect included.
        public var requestTimeoutMilliseconds: Int
        /// `ca_file` and the client identity, loaded.
        var transport: ProviderTransport

        /// Where each new connection looks up the addresses of the endpoint's host (not an option of the config file):
        /// the system's resolver unless an embedder gives another.
        public var resolver: ProviderResolver {
            get { transport.resolver }
            set { transport.resolver = newValue }
        }

        static let keys: Set<String> = [
            "key_file", "key_id", "team_id", "cert_file", "cert_key_file", "topic", "environment", "endpoint", "ca_file",
            "max_connections", "request_timeout_ms",
        ]

        /// Reads and checks the options; relative paths are resolved against `baseDirectory` (the config file's folder).
        public init(options: [String: JSONValue], baseDirectory: String?) throws(ProviderConfigError) {
            let o = try ProviderOptions(options, allowed: Self.keys, baseDirectory: baseDirectory, providerType: "apns")
            transport = ProviderTransport()

            let tokenKeys = ["key_file", "key_id", "team_id"].filter { o.has($0) }
            let certKeys = ["cert_file", "cert_key_file"].filter { o.has($0) }
            switch (tokenKeys.isEmpty, certKeys.isEmpty) {
            case (false, false):
                throw ProviderConfigError(
                    key: certKeys[0],
                    problem:
                        "choose token authentication (key_file, key_id, team_id) or certificate authentication (cert_file, cert_key_file), not both"
                )
            case (true, true):
                throw ProviderConfigError(
                    key: "key_file",
                    problem:
                        "is required: the .p8 APNs auth key from the Apple Developer account (with key_id and team_id), or give cert_file and cert_key_file"
                )
            case (false, true):
                let keyPath = try o.path("key_file")
                guard let keyPath else {
                    throw ProviderConfigError(key: "key_file", problem: "is required with key_id and team_id: the path of the .p8 APNs auth key")
                }
                let pem = try o.fileContents("key_file") ?? ""
                let key: P256.Signing.PrivateKey
                do {
                    key = try P256.Signing.PrivateKey(pemRepresentation: pem)
                } catch {
                    throw ProviderConfigError(
                        key: "key_file",
                        problem: "'\(keyPath)' is not a P-256 private key in PKCS#8 PEM form (the AuthKey_XXXXXXXXXX.p8 file Apple provides)"
                    )
                }
                let keyID = try o.requiredString("key_id", hint: "the 10-character Key ID of the .p8 key")
                let teamID = try o.requiredString("team_id", hint: "the 10-character Team ID of the Apple Developer account")
                for (k, v) in [("key_id", keyID), ("team_id", teamID)] where !v.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
                    throw ProviderConfigError(key: k, problem: "must be letters and digits only (Apple's IDs are 10 characters)")
                }
                authentication = .token(keyID: keyID, teamID: teamID, key: key)
            case (true, false):
                guard let cert = try o.path("cert_file") else {
                    throw ProviderConfigError(key: "cert_file", problem: "is required with cert_key_file: the PEM client certificate for APNs")
                }
                guard let key = try o.path("cert_key_file") else {
                    throw ProviderConfigError(
                        key: "cert_key_file",
                        problem: "is required with cert_file: the PEM private key of the client certificate"
                    )
                }
                transport.clientIdentity = try ProviderTransport.loadIdentity(certPath: cert, keyPath: key)
                authentication = .certificate
            }

            topic = try o.requiredString("topic", hint: "the app's bundle id, e.g. io.robbie.HomeAssistant")
            guard topic.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }) else {
                throw ProviderConfigError(key: "topic", problem: "'\(topic)' is not a bundle id")
            }
            let env = try o.string("environment") ?? "production"
            guard let environment = Environment(rawValue: env) else {
                throw ProviderConfigError(key: "environment", problem: "must be 'production' or 'sandbox' (got '\(env)')")
            }
            self.environment = environment
            endpoint = try EndpointOption.parse(o.string("endpoint") ?? environment.endpoint, key: "endpoint")
            maxConnections = try o.int("max_connections", in: 1...1024) ?? 4
            requestTimeoutMilliseconds = try o.int("request_timeout_ms", in: 100...120_000) ?? 10_000
            if let ca = try o.path("ca_file") {
                transport.extraTrustRoots = try ProviderTransport.loadTrustRoots(path: ca, key: "ca_file")
            }
            transport.maxConnections = maxConnections
            transport.requestTimeout = .milliseconds(Int64(requestTimeoutMilliseconds))
        }
    }
}
