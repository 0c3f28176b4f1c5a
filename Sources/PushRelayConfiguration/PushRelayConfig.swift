import Foundation
import Logging
import PushRelayCore
import PushRelayHTTP
import PushRelayPushChannel
import PushRelayWebPushRelay

/// Everything `pushrelay serve` reads from its YAML file and `PUSHRELAY_*` environment variables.
/// `config/pushrelay.example.yaml` documents every key; the defaults below are the embedded ones.
///
/// Each section has its own reader, in a file named by the section (`HTTPConfig.swift` reads `http:`); `init(tree:)`
/// composes them.
public struct PushRelayConfig: Sendable {
    public var http = HTTP()
    public var storage = Storage()
    public var quota = Quota()
    public var delivery = DeliverySettings()
    public var channel = PushChannelSettings()
    public var relay = WebPushRelaySettings()
    public var calls = CallSettings()
    /// `home_assistant:`: keys and networks that close Home Assistant's routes to everyone else.
    public var homeAssistant = HomeAssistant()
    /// Keys read under an older name (logged at start).
    public var deprecations: [Deprecation] = []
    public var apps: [AppProviders.Entry] = [.init(match: "*", provider: "sandbox")]
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
    public var usingDefaultApps = true
    /// The config file's folder: relative paths in provider options (key files…) are resolved against it.
    public var baseDirectory: String?

    public init() {}
}

extension PushRelayConfig {
    /// The config file's top-level entries, each section's keys declared once beside its reader with whether a
    /// `PUSHRELAY_*` variable sets them. `apps`, `providers` and `quota.app_limits` may be given in the environment
    /// as YAML or JSON text.
    package static let sections: [ConfigSection] = [
        .section("http", httpKeys),
        .section("storage", storageKeys),
        .section("quota", quotaKeys),
        .section("delivery", deliveryKeys),
        .section("channel", channelKeys),
        .value("apps"),
        .value("providers"),
        .section("admin", adminKeys),
        .section("security", securityKeys),
        .section("home_assistant", homeAssistantKeys),
        .section("metrics", metricsKeys),
        .section("log", logKeys),
        .section("ios", iosKeys),
        .section("matrix", matrixKeys, checksItsOwnKeys: true),
        .section("relay", relayKeys),
        .section("calls", callKeys),
        .section("voip", callKeys),
    ]

    /// What the unknown-key check accepts, from `sections`: the top-level names (under ""), and each section's keys
    /// but those of a section that checks its own (`matrix:`).
    package static let knownKeys: [String: Set<String>] = sections.reduce(into: ["": []]) { known, section in
        known[""]!.insert(section.name)
        if case .keys(let keys) = section.content, !section.checksItsOwnKeys { known[section.name] = keys.names() }
    }

    /// Every key a variable overrides (`a.b_c` ↔ `PUSHRELAY_A_B_C`), from `sections`.
    package static let overridableKeys: [String] = sections.flatMap(\.overridableKeys)

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
    ///
    /// The sections are read in this order, and a file with several mistakes is refused with the first one found: keep
    /// the order when adding a section. The sections that name providers (`apps`, `matrix`, `relay`, `calls`) come
    /// after `providers`.
    public init(tree: [String: JSONValue], baseDirectory: String? = nil) throws {
        self.init()
        self.baseDirectory = baseDirectory
        let r = ConfigTreeReader(tree: tree)
        try r.checkUnknownKeys(Self.knownKeys)

        http = try HTTP(reading: r)
        storage = try Storage(reading: r)
        quota = try Quota(reading: r)
        delivery = try DeliverySettings(reading: r, requestTimeoutMs: http.requestTimeoutMs)
        channel = try PushChannelSettings(reading: r)
        maxFailedAuthsPerMinute = try Self.maxFailedAuthsPerMinute(reading: r) ?? maxFailedAuthsPerMinute
        homeAssistant = try HomeAssistant(reading: r)
        adminToken = try Self.adminToken(reading: r)
        metricsEnabled = try Self.metricsEnabled(reading: r) ?? metricsEnabled
        logLevel = try Self.logLevel(reading: r) ?? logLevel
        logFormat = try Self.logFormat(reading: r) ?? logFormat
        iosCompanionAppIDs = try Self.iosCompanionAppIDs(reading: r) ?? iosCompanionAppIDs

        let providersGiven = tree["providers"] != nil
        let appsGiven = tree["apps"] != nil
        providers = try Self.providers(reading: r, baseDirectory: baseDirectory) ?? providers
        let defined = ProviderReferences(providers)
        apps = try Self.apps(reading: r, providers: defined, providersGiven: providersGiven, default: apps)
        usingDefaultApps = !providersGiven && !appsGiven
        matrix = try Matrix(reading: r, providers: defined)
        relay = try WebPushRelaySettings(reading: r, providers: defined)
        calls = try CallSettings(reading: r, providers: defined, deprecations: &deprecations)
    }
}
