import Foundation
import NIOCore
import PushRelayCore

extension FCMProvider {
    /// The options of a `type: fcm` provider.
    ///
    /// ```yaml
    /// providers:
    ///   android:
    ///     type: fcm
    ///     service_account_file: /etc/pushrelay/firebase.json   # or service_account_json: '{...}'
    ///     project_id: my-project          # default: the file's project_id
    ///     endpoint: https://fcm.googleapis.com
    ///     ca_file: /path/extra-ca.pem     # tests only
    ///     max_connections: 8
    ///     request_timeout_ms: 5000
    /// ```
    public struct Configuration: ProviderConfiguration {
        /// The credentials that sign the OAuth assertion (`service_account_file` or `service_account_json`).
        public var serviceAccount: ServiceAccount
        /// `project_id`: the Firebase project messages are sent through (`/v1/projects/{project_id}/messages:send`).
        public var projectID: String
        /// `endpoint`: scheme, host and port of the FCM API, without a trailing slash.
        public var endpoint: String
        /// `max_connections`: HTTP/1.1 connections per host; over HTTP/2 requests share one connection.
        public var maxConnections: Int
        /// `request_timeout_ms`: one upstream exchange (token endpoint or send), connect included.
        public var requestTimeoutMilliseconds: Int
        /// `ca_file`, loaded.
        var transport: ProviderTransport

        /// Where each new connection looks up the addresses of the endpoint's host and of the OAuth token endpoint's
        /// (not an option of the config file): the system's resolver unless an embedder gives another.
        public var resolver: ProviderResolver {
            get { transport.resolver }
            set { transport.resolver = newValue }
        }

        public static let defaultEndpoint = "https://fcm.googleapis.com"
        static let keys: Set<String> = [
            "service_account_file", "service_account_json", "project_id", "endpoint", "ca_file", "max_connections", "request_timeout_ms",
        ]

        /// Reads and checks the options; relative paths are resolved against `baseDirectory` (the config file's folder).
        public init(options: [String: JSONValue], baseDirectory: String?) throws(ProviderConfigError) {
            let o = try ProviderOptions(options, allowed: Self.keys, baseDirectory: baseDirectory, providerType: "fcm")
            let accountKey: String
            let accountText: String
            switch (o.has("service_account_file"), o.has("service_account_json")) {
            case (true, true):
                throw ProviderConfigError(key: "service_account_json", problem: "give either service_account_file or service_account_json, not both")
            case (false, false):
                throw ProviderConfigError(
                    key: "service_account_file",
                    problem: "is required: the path of the Firebase service-account JSON key (or give it inline as service_account_json)"
                )
            case (true, false):
                accountKey = "service_account_file"
                accountText = try o.fileContents(accountKey) ?? ""
            case (false, true):
                accountKey = "service_account_json"
                accountText = try o.string(accountKey) ?? ""
            }
            serviceAccount = try ServiceAccount.parse(accountText, key: accountKey)

            guard let project = try o.string("project_id") ?? serviceAccount.projectID else {
                throw ProviderConfigError(key: "project_id", problem: "is required: the service account has no project_id")
            }
            guard project.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.:_".contains($0)) }) else {
                throw ProviderConfigError(key: "project_id", problem: "'\(project)' is not a Firebase project id")
            }
            projectID = project
            endpoint = try EndpointOption.parse(o.string("endpoint") ?? Self.defaultEndpoint, key: "endpoint")
            maxConnections = try o.int("max_connections", in: 1...1024) ?? 8
            requestTimeoutMilliseconds = try o.int("request_timeout_ms", in: 100...120_000) ?? 10_000
            transport = ProviderTransport()
            if let ca = try o.path("ca_file") {
                transport.extraTrustRoots = try ProviderTransport.loadTrustRoots(path: ca, key: "ca_file")
            }
            transport.maxConnections = maxConnections
            transport.requestTimeout = .milliseconds(Int64(requestTimeoutMilliseconds))
        }

        /// `{endpoint}/v1/projects/{project_id}/messages:send`.
        public var sendURL: String { "\(endpoint)/v1/projects/\(projectID)/messages:send" }
    }
}

/// `endpoint` options: an absolute http(s) URL naming only scheme, host and port.
enum EndpointOption {
    static func parse(_ raw: String, key: String) throws(ProviderConfigError) -> String {
        var s = raw
        while s.hasSuffix("/") { s.removeLast() }
        guard let url = URL(string: s), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = url.host, !host.isEmpty, url.path.isEmpty, url.query == nil
        else {
            throw ProviderConfigError(
                key: key,
                problem: "'\(raw)' must be an http(s) URL with only a host and optional port, e.g. https://127.0.0.1:8443"
            )
        }
        return s
    }
}
