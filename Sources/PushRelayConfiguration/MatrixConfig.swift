import Foundation
import PushRelayCore

extension PushRelayConfig {
    /// `matrix:`: the Matrix push gateway (`POST /_matrix/push/v1/notify`).
    public struct Matrix: Sendable {
        public init() {}
        /// `matrix.apps`: app id or glob → how to deliver. Empty: every pushkey is rejected.
        public var apps: [String: MatrixApp] = [:]
        /// `matrix.dedup_window`: a notification for the same (event_id, pushkey) within this window is not pushed again.
        public var dedupWindowMs: Int64 = 3_600_000
        /// `matrix.max_devices`: devices one notify may list; a notify with more is answered 400 before any is pushed.
        /// Homeservers send one device per notify (Synapse) or a handful.
        public var maxDevices = 100
        public var retry = MatrixRetry()
    }

    /// One entry of `matrix.apps`.
    public struct MatrixApp: Sendable {
        /// `provider`: a name under `providers`.
        public var provider: String
        /// The payload shape (from `platform`, else the provider's type) and its options.
        public var format: MatrixFormat
        /// `daily_limit`: pushes per pushkey per UTC day for this app; nil means unlimited.
        public var dailyLimit: Int?

        public init(provider: String, format: MatrixFormat, dailyLimit: Int? = nil) {
            self.provider = provider
            self.format = format
            self.dailyLimit = dailyLimit
        }
    }

    /// `matrix.retry`: the background retry of devices that failed transiently after the homeserver got its 200.
    public struct MatrixRetry: Sendable {
        public init() {}
        /// `base_delay`: the first retry's delay; it doubles per attempt up to `max_delay`.
        public var baseDelayMs: Int64 = 30_000
        public var maxDelayMs: Int64 = 3_600_000
        /// `max_attempts`: attempts in total (the first one included) before the device is given up on.
        public var maxAttempts = 10
        /// `poll_interval`: how often the queue is checked for due items.
        public var pollIntervalMs: Int64 = 5_000
        /// `max_queued`: devices the retry queue holds at most. A notify whose failed devices would not fit is answered
        /// 502 (the homeserver retries it itself) instead of queueing them.
        public var maxQueued = 10_000
    }

    /// The section checks its own keys as it is read (its errors differ from `knownKeys`' ones); `retry` is a nested
    /// section. No variable sets them.
    static let matrixKeys: [ConfigKey] = [
        .fileOnly("apps"), .fileOnly("dedup_window"), .fileOnly("max_devices"), .fileOnly("retry.base_delay"), .fileOnly("retry.max_delay"),
        .fileOnly("retry.max_attempts"), .fileOnly("retry.poll_interval"), .fileOnly("retry.max_queued"),
    ]
    static let matrixAppKeys: Set<String> = [
        "provider", "platform", "daily_limit", "push_type", "convert_device_token_to_hex", "send_badge_counts", "fcm_options",
    ]
}

extension PushRelayConfig.Matrix {
    /// Reads `matrix:` over the defaults (after `providers`, which the apps name).
    package init(reading root: ConfigTreeReader, providers: ProviderReferences) throws {
        self.init()
        guard let raw = root.value("matrix") else { return }
        guard case .object(let m) = raw else { throw ConfigError(key: "matrix", problem: "must be a mapping with 'apps'") }
        let keys = PushRelayConfig.matrixKeys.names()
        if let extra = m.keys.sorted().first(where: { !keys.contains($0) }) {
            throw ConfigError(key: "matrix.\(extra)", problem: "unknown key (known: \(keys.sorted().joined(separator: ", ")))")
        }
        let r = ConfigTreeReader(tree: m)
        if let v = try r.string("dedup_window") {
            guard let ms = DurationText.milliseconds(v) else {
                throw ConfigError(key: "matrix.dedup_window", problem: "must be a duration such as 3600 (seconds), 90m or 1h; got '\(v)'")
            }
            dedupWindowMs = ms
        }
        do {
            if let v = try r.int("max_devices", range: 1...10_000) { maxDevices = v }
        } catch let e as ConfigError {
            throw ConfigError(key: "matrix.\(e.key)", problem: e.problem)
        }
        if let section = try r.object("retry") { retry = try PushRelayConfig.MatrixRetry(reading: section) }
        guard let apps = try r.object("apps") else { return }
        for id in apps.keys.sorted() {
            self.apps[id] = try PushRelayConfig.MatrixApp(id: id, reading: apps[id]!, providers: providers)
        }
    }
}

extension PushRelayConfig.MatrixRetry {
    /// Reads `matrix.retry` (the section's mapping) over the defaults.
    package init(reading section: [String: JSONValue]) throws {
        self.init()
        let keys = PushRelayConfig.matrixKeys.names(in: "retry")
        if let extra = section.keys.sorted().first(where: { !keys.contains($0) }) {
            throw ConfigError(key: "matrix.retry.\(extra)", problem: "unknown key (known: \(keys.sorted().joined(separator: ", ")))")
        }
        let r = ConfigTreeReader(tree: section)
        func duration(_ key: String, min: Int64) throws -> Int64? {
            guard let v = try r.string(key) else { return nil }
            guard let ms = DurationText.milliseconds(v), ms >= min else {
                throw ConfigError(
                    key: "matrix.retry.\(key)",
                    problem: "must be a duration of at least \(min) ms such as 30s, 5m or 500ms; got '\(v)'"
                )
            }
            return ms
        }
        if let v = try duration("base_delay", min: 10) { baseDelayMs = v }
        if let v = try duration("max_delay", min: 10) { maxDelayMs = v }
        if let v = try duration("poll_interval", min: 10) { pollIntervalMs = v }
        do {
            if let v = try r.int("max_attempts", range: 1...100) { maxAttempts = v }
            if let v = try r.int("max_queued", range: 1...10_000_000) { maxQueued = v }
        } catch let e as ConfigError {
            throw ConfigError(key: "matrix.retry.\(e.key)", problem: e.problem)
        }
    }
}

extension PushRelayConfig.MatrixApp {
    /// Reads the entry `matrix.apps.<id>`: its provider (which must be defined), the payload shape (`platform`, else
    /// the provider's type, else fcm) and that shape's options.
    package init(id: String, reading value: JSONValue, providers: ProviderReferences) throws {
        let key = "matrix.apps.\(id)"
        guard case .object(let o) = value else { throw ConfigError(key: key, problem: "must be a mapping with at least 'provider'") }
        let keys = PushRelayConfig.matrixAppKeys
        if let extra = o.keys.sorted().first(where: { !keys.contains($0) }) {
            throw ConfigError(key: "\(key).\(extra)", problem: "unknown key (known: \(keys.sorted().joined(separator: ", ")))")
        }
        guard case .string(let provider)? = o["provider"], !provider.isEmpty else {
            throw ConfigError(key: "\(key).provider", problem: "is required: the name of an entry under 'providers'")
        }
        let p = try providers.provider(provider, key: "\(key).provider")
        let r = ConfigTreeReader(tree: o)
        func scoped<T>(_ body: () throws -> T) throws -> T {
            do { return try body() } catch let e as ConfigError { throw ConfigError(key: "\(key).\(e.key)", problem: e.problem) }
        }
        var platform = p.type
        if let v = try scoped({ try r.string("platform") }) {
            guard ["fcm", "apns", "webpush"].contains(v) else {
                throw ConfigError(key: "\(key).platform", problem: "must be fcm, apns or webpush; got '\(v)'")
            }
            platform = v
        } else if !["fcm", "apns", "webpush"].contains(platform) {
            platform = "fcm"
        }
        if ["fcm", "apns", "webpush"].contains(p.type), p.type != platform {
            throw ConfigError(key: "\(key).platform", problem: "is '\(platform)' but provider '\(provider)' is of type \(p.type)")
        }
        let dailyLimit = try scoped({ try r.int("daily_limit", range: 0...10_000_000) })
        let sendBadgeCounts = try scoped({ try r.bool("send_badge_counts") }) ?? true
        func only(_ keys: [String], for platformName: String) throws {
            if let k = keys.first(where: { o[$0] != nil && o[$0] != .null }), platform != platformName {
                throw ConfigError(key: "\(key).\(k)", problem: "only applies to \(platformName) apps; this app is delivered as \(platform)")
            }
        }
        try only(["push_type", "convert_device_token_to_hex"], for: "apns")
        try only(["fcm_options"], for: "fcm")
        let format: MatrixFormat
        switch platform {
        case "apns":
            let pushType = try scoped({ try r.string("push_type") })
            let allowed = ["alert", "background", "voip", "complication", "fileprovider", "mdm"]
            if let t = pushType, !allowed.contains(t) {
                throw ConfigError(key: "\(key).push_type", problem: "must be one of \(allowed.joined(separator: ", ")); got '\(t)'")
            }
            format = .apns(
                MatrixAPNsOptions(
                    pushType: pushType,
                    convertDeviceTokenToHex: try scoped({ try r.bool("convert_device_token_to_hex") }) ?? true,
                    sendBadgeCounts: sendBadgeCounts
                )
            )
        case "webpush":
            if o["send_badge_counts"] != nil { throw ConfigError(key: "\(key).send_badge_counts", problem: "only applies to fcm and apns apps") }
            format = .webPush
        default:
            let options = try scoped({ try r.object("fcm_options") }) ?? [:]
            if let reserved = ["data", "token", "topic", "condition"].first(where: { options[$0] != nil }) {
                throw ConfigError(key: "\(key).fcm_options.\(reserved)", problem: "is set by PushRelay for every message; remove it")
            }
            format = .fcm(MatrixFCMOptions(fcmOptions: options, sendBadgeCounts: sendBadgeCounts))
        }
        self.init(provider: provider, format: format, dailyLimit: dailyLimit)
    }
}
