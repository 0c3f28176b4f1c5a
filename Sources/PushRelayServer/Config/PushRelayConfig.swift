import Foundation
import Logging
import PushRelayCore
import PushRelayPostgres
import PushRelayProviders

/// Everything `pushrelay serve` reads from its YAML file and `PUSHRELAY_*` environment variables.
/// `config/pushrelay.example.yaml` documents every key; the defaults below are the embedded ones.
public struct PushRelayConfig: Sendable {
    public struct HTTP: Sendable {
        public init() {}
        public var host = "127.0.0.1"
        public var port = 8080
        /// Larger request bodies are answered 413.
        public var maxBodyBytes = 256 * 1024
        /// `http.request_timeout`: from a request's first byte to its answer; a client that has not sent its whole
        /// request by then (a slowloris, a trickled body) gets 408 and the connection closes. Longer than the
        /// delivery deadline, which the answer may wait for.
        public var requestTimeoutMs: Int64 = 30_000
        /// `http.idle_timeout`: a keep-alive connection with no request for this long is closed.
        public var idleTimeoutMs: Int64 = 75_000
        /// `http.max_connections_per_address`: open connections (websockets included) one client address may hold;
        /// further ones are closed at once. 0: no limit.
        public var maxConnectionsPerAddress = 1024
        /// `http.trusted_proxies`: reverse proxies (addresses or CIDR networks) whose `X-Forwarded-For` / `Forwarded`
        /// name the client, for the per-address budgets and the logs. Empty: every request is its connection's peer.
        public var trustedProxies = TrustedProxies()
    }

    public struct Storage: Sendable {
        public init() {}
        /// `storage.backend`: which engine holds the data.
        public var backend = Backend.sqlite
        /// `storage.sqlite_path` (SQLite only).
        public var sqlitePath = "./pushrelay.sqlite"
        /// `storage.postgres.*` (PostgreSQL only): validated when `backend` is `postgres`.
        public var postgres: PostgresStorageConfiguration?

        public enum Backend: String, Sendable, CaseIterable {
            /// One file, one process: the embedded default.
            case sqlite
            /// A PostgreSQL database that several instances share.
            case postgres
        }

        /// Where the data is, for logs and `check-config`: the SQLite path, or PostgreSQL's address without credentials.
        public var location: String {
            switch backend {
            case .sqlite: "SQLite \(sqlitePath)"
            case .postgres: postgres.map { "PostgreSQL \($0)" } ?? "PostgreSQL (not configured)"
            }
        }
    }

    public struct Quota: Sendable {
        public init() {}
        public var dailyLimit = 500
        public var appLimits: [(pattern: String, limit: Int)] = []
        public var exemptCommands = true
        public var exemptCritical = true
        public var retentionDays = 30
    }

    public struct Delivery: Sendable {
        public init() {}
        /// Each Home Assistant request's delivery deadline (under Home Assistant's 10 s timeout).
        public var deadlineMs = 8000
        /// How long a token a provider reported as dead is answered 410 without calling the provider.
        public var deadTokenTTLms: Int64 = 7 * 86_400_000
        /// Deliveries in flight per provider instance; past it a dispatch waits for a place, for `maxWaitMs` at most.
        public var maxInFlight = 256
        /// How long a dispatch may wait for a place at its provider's in-flight bound before it is refused (503
        /// `ProviderBusy`); the wait counts toward `deadlineMs`. Half of `deadlineMs` unless set.
        public var maxWaitMs = 4000
        /// Retries of transient failures: first backoff and attempts in total.
        public var retryBaseMs = 100
        public var maxAttempts = 4
        /// The circuit breaker per provider instance: `delivery.breaker_failure_ratio` of at least
        /// `delivery.breaker_min_requests` deliveries within `delivery.breaker_window` failing transiently opens it for
        /// `delivery.breaker_cool_down` (0: no breaker).
        public var breakerFailureRatio = 0.5
        public var breakerMinRequests = 20
        public var breakerWindowMs: Int64 = 30_000
        public var breakerCoolDownMs: Int64 = 30_000

        public var breaker: CircuitBreakerState.Settings? {
            guard breakerCoolDownMs > 0 else { return nil }
            return CircuitBreakerState.Settings(
                failureRatio: breakerFailureRatio,
                minimumRequests: breakerMinRequests,
                window: TimeInterval(breakerWindowMs) / 1000,
                coolDown: TimeInterval(breakerCoolDownMs) / 1000,
                probeTimeout: max(TimeInterval(deadlineMs) / 1000 * 2, 1)
            )
        }

        public var retryPolicy: RetryPolicy { RetryPolicy(baseDelayMs: retryBaseMs, maxDelayMs: max(retryBaseMs, 2000), maxAttempts: maxAttempts) }
    }

    public struct ProviderConfig: Sendable {
        public var name: String
        public var type: String
        /// The provider's own keys (type-specific), as written in the file.
        public var options: [String: JSONValue]

        public init(name: String, type: String, options: [String: JSONValue] = [:]) {
            self.name = name
            self.type = type
            self.options = options
        }
    }

    public var http = HTTP()
    public var storage = Storage()
    public var quota = Quota()
    public var delivery = Delivery()
    public var channel = LocalPushSettings()
    public var relay = WebPushRelaySettings()
    public var calls = CallSettings()
    /// Keys read under an older name (logged at start).
    public var deprecations: [Deprecation] = []
    public var apps: [AppRoutes.Route] = [.init(match: "*", provider: "sandbox")]
    public var providers: [String: ProviderConfig] = ["sandbox": .init(name: "sandbox", type: "sandbox", options: [:])]
    public var matrix = Matrix()
    /// Bearer token for `/admin/v1/`; nil disables the admin API (404).
    public var adminToken: String?
    /// Failed credential checks allowed per client address per minute (`security.max_failed_auths_per_minute`): websocket
    /// authentications and refused subscriptions, admin tokens, API keys. Past it every credential from that address
    /// is refused until the minute is over.
    public var maxFailedAuthsPerMinute = 10
    /// Serve Prometheus metrics at `GET /metrics` (behind the admin token when one is set).
    public var metricsEnabled = false
    public var logLevel: Logger.Level = .info
    /// How log lines are written (`log.format`): readable text (the default) or one JSON object a line.
    public var logFormat: LogFormat = .text
    /// App-id globs that get the Home Assistant companion app's iOS translation (commands, `push` merge…).
    public var iosCompanionAppIDs = ["*io.robbie.HomeAssistant*"]
    /// True when neither the file nor the environment configured `apps`/`providers`.
    public var usingDefaultRoutes = true
    /// The config file's folder: relative paths in provider options (key files…) are resolved against it.
    public var baseDirectory: String?

    public init() {}

    public var quotaPolicy: QuotaPolicy {
        QuotaPolicy(
            dailyLimit: quota.dailyLimit,
            appLimits: quota.appLimits,
            exemptCommands: quota.exemptCommands,
            exemptCritical: quota.exemptCritical
        )
    }
}

/// A configuration problem, naming the key so the admin can fix it.
public struct ConfigError: Error, CustomStringConvertible, Sendable {
    public var key: String
    public var problem: String
    public var description: String { key.isEmpty ? "invalid configuration: \(problem)" : "invalid configuration: \(key): \(problem)" }
}

extension ConfigError {
    /// A provider's option error under `providers.<name>` (the option's own key appended when it names one).
    init(provider name: String, _ error: ProviderConfigError) {
        self.init(key: error.key.isEmpty ? "providers.\(name)" : "providers.\(name).\(error.key)", problem: error.problem)
    }
}

extension PushRelayConfig {
    /// Every scalar key and the environment variable that overrides it (`a.b_c` ↔ `PUSHRELAY_A_B_C`).
    /// `apps`, `providers` and `quota.app_limits` may also be given in the environment, as YAML or JSON text.
    static let knownKeys: [String: Set<String>] = [
        "": [
            "http", "storage", "quota", "delivery", "channel", "apps", "providers", "admin", "security", "metrics", "log", "ios", "matrix", "relay",
            "calls", "voip",
        ],
        "channel": channelKeys,
        "delivery": [
            "deadline_ms", "dead_token_ttl", "max_in_flight", "max_wait_ms", "retry_base_ms", "max_attempts", "breaker_failure_ratio",
            "breaker_min_requests",
            "breaker_window", "breaker_cool_down",
        ],
        "http": ["host", "port", "max_body_bytes", "request_timeout", "idle_timeout", "max_connections_per_address", "trusted_proxies"],
        "storage": ["backend", "sqlite_path", "postgres"],
        "quota": ["daily_limit", "app_limits", "exempt_commands", "exempt_critical", "retention_days"],
        "admin": ["token"],
        "security": ["max_failed_auths_per_minute"],
        "metrics": ["enabled"],
        "log": ["level", "format"],
        "ios": ["companion_app_ids"],
        "relay": relayKeys,
        "calls": callKeys,
        "voip": callKeys,
    ]

    static let overridableKeys = [
        "http.host", "http.port", "http.max_body_bytes", "http.request_timeout", "http.idle_timeout", "http.max_connections_per_address",
        "http.trusted_proxies", "storage.backend", "storage.sqlite_path", "storage.postgres.url", "storage.postgres.pool_size",
        "storage.postgres.tls",
        "quota.daily_limit", "quota.app_limits", "quota.exempt_commands", "quota.exempt_critical", "quota.retention_days",
        "delivery.deadline_ms", "delivery.dead_token_ttl", "delivery.max_in_flight", "delivery.max_wait_ms", "delivery.retry_base_ms",
        "delivery.max_attempts",
        "delivery.breaker_failure_ratio", "delivery.breaker_min_requests", "delivery.breaker_window", "delivery.breaker_cool_down",
        "channel.confirm_timeout_ms", "channel.offline_ttl", "channel.max_channels", "channel.max_pending",
        "channel.max_frame_bytes", "channel.outbound_buffer", "channel.auth_timeout_ms", "channel.ping_interval_ms",
        "channel.max_failed_auths_per_minute", "security.max_failed_auths_per_minute",
        "apps", "providers", "admin.token", "metrics.enabled", "log.level", "log.format", "ios.companion_app_ids",
    ]

    public static func environmentVariable(for key: String) -> String {
        "PUSHRELAY_" + key.replacingOccurrences(of: ".", with: "_").uppercased()
    }

    /// Loads the file (if any), applies environment overrides, validates.
    public static func load(file: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PushRelayConfig {
        var tree: [String: JSONValue] = [:]
        if let file {
            let text: String
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw ConfigError(key: "", problem: "cannot read config file '\(file)': \(error.localizedDescription)")
            }
            switch try YAMLTree.parse(text, source: file) {
            case .object(let o): tree = o
            case .null: tree = [:]
            default: throw ConfigError(key: "", problem: "'\(file)' must contain a YAML mapping at the top level")
            }
        }
        for key in overridableKeys {
            let variable = environmentVariable(for: key)
            guard let raw = environment[variable] else { continue }
            let value = try YAMLTree.parse(raw, source: variable)
            setValue(value, at: key.split(separator: ".").map(String.init), in: &tree)
        }
        let base = file.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
        return try PushRelayConfig(tree: tree, baseDirectory: base)
    }

    static func setValue(_ value: JSONValue, at path: [String], in tree: inout [String: JSONValue]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            tree[first] = value
            return
        }
        var sub = tree[first]?.objectValue ?? [:]
        setValue(value, at: Array(path.dropFirst()), in: &sub)
        tree[first] = .object(sub)
    }

    /// Validates a parsed tree. Provider options are checked too (files read, keys parsed), so a bad key file stops
    /// the server at start with the key named, not at the first notification.
    public init(tree: [String: JSONValue], baseDirectory: String? = nil) throws {
        self.init()
        self.baseDirectory = baseDirectory
        let r = ConfigTreeReader(tree: tree)
        try r.checkUnknownKeys(Self.knownKeys)

        if let v = try r.string("http.host") {
            guard !v.isEmpty else { throw ConfigError(key: "http.host", problem: "must not be empty") }
            http.host = v
        }
        if let v = try r.int("http.port", range: 0...65535) { http.port = v }
        if let v = try r.int("http.max_body_bytes", range: 1024...(64 * 1024 * 1024)) { http.maxBodyBytes = v }
        if let ms = try r.durationMs("http.request_timeout") {
            guard ms >= 1000 else { throw ConfigError(key: "http.request_timeout", problem: "must be at least 1s") }
            http.requestTimeoutMs = ms
        }
        if let ms = try r.durationMs("http.idle_timeout") {
            guard ms >= 1000 else { throw ConfigError(key: "http.idle_timeout", problem: "must be at least 1s") }
            http.idleTimeoutMs = ms
        }
        if let v = try r.int("http.max_connections_per_address", range: 0...1_000_000) { http.maxConnectionsPerAddress = v }
        try readTrustedProxies(r)
        if let v = try r.string("storage.sqlite_path") {
            guard !v.isEmpty else { throw ConfigError(key: "storage.sqlite_path", problem: "must not be empty") }
            storage.sqlitePath = v
        }
        try readPostgres(r)
        if let v = try r.int("quota.daily_limit", range: 0...10_000_000) { quota.dailyLimit = v }
        if let v = try r.bool("quota.exempt_commands") { quota.exemptCommands = v }
        if let v = try r.bool("quota.exempt_critical") { quota.exemptCritical = v }
        if let v = try r.int("quota.retention_days", range: 1...3650) { quota.retentionDays = v }
        if let limits = try r.object("quota.app_limits") {
            quota.appLimits = try limits.keys.sorted().map { pattern in
                guard case .int(let n)? = limits[pattern], n >= 0, n <= 10_000_000 else {
                    throw ConfigError(key: "quota.app_limits.\(pattern)", problem: "must be a whole number from 0 to 10000000")
                }
                return (pattern, Int(n))
            }
        }
        if let v = try r.int("delivery.deadline_ms", range: 100...60_000) { delivery.deadlineMs = v }
        if let v = try r.double("delivery.breaker_failure_ratio") {
            guard v > 0, v <= 1 else { throw ConfigError(key: "delivery.breaker_failure_ratio", problem: "must be a number above 0 and at most 1") }
            delivery.breakerFailureRatio = v
        }
        if let v = try r.int("delivery.breaker_min_requests", range: 1...1_000_000) { delivery.breakerMinRequests = v }
        if let ms = try r.durationMs("delivery.breaker_window") {
            guard ms >= 1000 else { throw ConfigError(key: "delivery.breaker_window", problem: "must be at least 1s") }
            delivery.breakerWindowMs = ms
        }
        if let ms = try r.durationMs("delivery.breaker_cool_down") { delivery.breakerCoolDownMs = ms }
        if http.requestTimeoutMs <= Int64(delivery.deadlineMs) {
            throw ConfigError(
                key: "http.request_timeout",
                problem: "must be longer than delivery.deadline_ms (\(delivery.deadlineMs) ms), which an answer may wait for"
            )
        }
        if let ms = try r.durationMs("delivery.dead_token_ttl") { delivery.deadTokenTTLms = ms }
        if let v = try r.int("delivery.max_in_flight", range: 1...100_000) { delivery.maxInFlight = v }
        delivery.maxWaitMs = delivery.deadlineMs / 2
        if let v = try r.int("delivery.max_wait_ms", range: 0...60_000) {
            guard v < delivery.deadlineMs else {
                throw ConfigError(
                    key: "delivery.max_wait_ms",
                    problem: "must be shorter than delivery.deadline_ms (\(delivery.deadlineMs) ms), which the wait is part of"
                )
            }
            delivery.maxWaitMs = v
        }
        if let v = try r.int("delivery.retry_base_ms", range: 1...10_000) { delivery.retryBaseMs = v }
        if let v = try r.int("delivery.max_attempts", range: 1...10) { delivery.maxAttempts = v }
        try readChannel(r)
        // `channel.max_failed_auths_per_minute` is the older name of the same limit; the new one wins.
        if let v = try r.int("channel.max_failed_auths_per_minute", range: 1...100_000) { maxFailedAuthsPerMinute = v }
        if let v = try r.int("security.max_failed_auths_per_minute", range: 1...100_000) { maxFailedAuthsPerMinute = v }
        if let v = try r.string("admin.token") {
            if !v.isEmpty {
                guard v.count >= 16 else {
                    throw ConfigError(key: "admin.token", problem: "must be at least 16 characters (or empty to disable the admin API)")
                }
                adminToken = v
            }
        }
        if let v = try r.bool("metrics.enabled") { metricsEnabled = v }
        if let v = try r.string("log.level") {
            guard let level = Logger.Level(rawValue: v.lowercased()) else {
                throw ConfigError(key: "log.level", problem: "must be one of trace, debug, info, notice, warning, error, critical; got '\(v)'")
            }
            logLevel = level
        }
        if let v = try r.string("log.format") {
            guard let format = LogFormat(rawValue: v.lowercased()) else {
                throw ConfigError(key: "log.format", problem: "must be text or json; got '\(v)'")
            }
            logFormat = format
        }
        if let ids = try r.array("ios.companion_app_ids") {
            iosCompanionAppIDs = try ids.enumerated().map { (k, v) in
                guard case .string(let s) = v, !s.isEmpty else {
                    throw ConfigError(key: "ios.companion_app_ids[\(k)]", problem: "must be a non-empty string")
                }
                return s
            }
        }

        let hasProviders = tree["providers"] != nil
        let hasApps = tree["apps"] != nil
        if let p = try r.object("providers") {
            providers = [:]
            for name in p.keys.sorted() {
                let key = "providers.\(name)"
                guard case .object(var options)? = p[name] else { throw ConfigError(key: key, problem: "must be a mapping with at least a 'type'") }
                guard case .string(let type)? = options.removeValue(forKey: "type") else {
                    throw ConfigError(key: "\(key).type", problem: "is required: one of \(ProviderType.names)")
                }
                guard let kind = ProviderType(rawValue: type) else {
                    throw ConfigError(key: "\(key).type", problem: "unknown provider type '\(type)': use \(ProviderType.names)")
                }
                do {
                    try kind.check(options: options, baseDirectory: baseDirectory)
                } catch {
                    throw ConfigError(provider: name, error)
                }
                providers[name] = ProviderConfig(name: name, type: type, options: options)
            }
        }
        if let list = try r.array("apps") {
            apps = try list.enumerated().map { (k, item) in
                let key = "apps[\(k)]"
                guard case .object(let o) = item else { throw ConfigError(key: key, problem: "must be a mapping {match, provider}") }
                guard case .string(let match)? = o["match"], !match.isEmpty else {
                    throw ConfigError(key: "\(key).match", problem: "is required: an app id or glob such as 'io.example.*'")
                }
                guard case .string(let provider)? = o["provider"] else {
                    throw ConfigError(key: "\(key).provider", problem: "is required: the name of an entry under 'providers'")
                }
                if let extra = o.keys.sorted().first(where: { $0 != "match" && $0 != "provider" && $0 != "encrypt_payloads" }) {
                    throw ConfigError(key: "\(key).\(extra)", problem: "unknown key")
                }
                return AppRoutes.Route(
                    match: match,
                    provider: provider,
                    encryptPayloads: try Self.encryptPayloads(o["encrypt_payloads"], key: "\(key).encrypt_payloads")
                )
            }
        }
        if hasProviders && !hasApps {
            // Providers without routes: route everything to the only provider, if there is exactly one.
            guard providers.count == 1, let only = providers.keys.first else {
                throw ConfigError(key: "apps", problem: "is required when several providers are configured: map app ids to provider names")
            }
            apps = [.init(match: "*", provider: only)]
        }
        for (k, route) in apps.enumerated() where providers[route.provider] == nil && route.provider != AppRoutes.localOnly {
            throw ConfigError(
                key: "apps[\(k)].provider",
                problem:
                    "names '\(route.provider)', which is not defined under 'providers' (defined: \(providers.keys.sorted().joined(separator: ", ")))"
            )
        }
        usingDefaultRoutes = !hasProviders && !hasApps
        try parseMatrix(tree)
        try readRelayAndCalls(r)
    }
}

/// Typed access to a parsed configuration tree, with errors that name the key.
struct ConfigTreeReader {
    let tree: [String: JSONValue]

    func value(_ key: String) -> JSONValue? {
        var node: JSONValue = .object(tree)
        for part in key.split(separator: ".") {
            guard case .object(let o) = node, let next = o[String(part)] else { return nil }
            node = next
        }
        if case .null = node { return nil }
        return node
    }

    /// Whether the tree sets `key` (to anything but null).
    func has(_ key: String) -> Bool { value(key) != nil }

    func checkUnknownKeys(_ known: [String: Set<String>]) throws {
        for key in tree.keys.sorted() where !(known[""]!.contains(key)) {
            throw ConfigError(key: key, problem: "unknown key (known: \(known[""]!.sorted().joined(separator: ", ")))")
        }
        for (section, keys) in known where !section.isEmpty {
            guard let v = tree[section] else { continue }
            if case .null = v { continue }
            guard case .object(let o) = v else { throw ConfigError(key: section, problem: "must be a mapping") }
            for key in o.keys.sorted() where !keys.contains(key) {
                throw ConfigError(key: "\(section).\(key)", problem: "unknown key (known: \(keys.sorted().joined(separator: ", ")))")
            }
        }
    }

    func string(_ key: String) throws -> String? {
        guard let v = value(key) else { return nil }
        switch v {
        case .string(let s): return s
        case .int(let i): return String(i)
        default: throw ConfigError(key: key, problem: "must be a string")
        }
    }

    func int(_ key: String, range: ClosedRange<Int>) throws -> Int? {
        guard let v = value(key) else { return nil }
        let n: Int?
        switch v {
        case .int(let i): n = Int(exactly: i)
        case .string(let s): n = Int(s)
        default: n = nil
        }
        guard let n, range.contains(n) else {
            throw ConfigError(key: key, problem: "must be a whole number from \(range.lowerBound) to \(range.upperBound); got \(v.jsonString())")
        }
        return n
    }

    func double(_ key: String) throws -> Double? {
        guard let v = value(key) else { return nil }
        switch v {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .string(let s):
            guard let d = Double(s) else { throw ConfigError(key: key, problem: "must be a number; got \(v.jsonString())") }
            return d
        default: throw ConfigError(key: key, problem: "must be a number; got \(v.jsonString())")
        }
    }

    func bool(_ key: String) throws -> Bool? {
        guard let v = value(key) else { return nil }
        switch v {
        case .bool(let b): return b
        case .string(let s) where ["true", "false"].contains(s.lowercased()): return s.lowercased() == "true"
        default: throw ConfigError(key: key, problem: "must be true or false; got \(v.jsonString())")
        }
    }

    /// A duration in milliseconds, written as whole seconds (`3600`) or with a unit (`500ms`, `90s`, `30m`, `24h`, `7d`).
    func durationMs(_ key: String) throws -> Int64? {
        guard let v = try string(key) else { return nil }
        guard let ms = DurationText.milliseconds(v) else {
            throw ConfigError(key: key, problem: "must be a duration such as 3600 (seconds), 90m, 24h or 7d; got '\(v)'")
        }
        return ms
    }

    func object(_ key: String) throws -> [String: JSONValue]? {
        guard let v = value(key) else { return nil }
        guard case .object(let o) = v else { throw ConfigError(key: key, problem: "must be a mapping") }
        return o
    }

    func array(_ key: String) throws -> [JSONValue]? {
        guard let v = value(key) else { return nil }
        guard case .array(let a) = v else { throw ConfigError(key: key, problem: "must be a list") }
        return a
    }
}
