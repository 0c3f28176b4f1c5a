/// `calls.*`: call-invite pushes (`/api/v1/devices`, `/api/v1/calls`). `voip.*` is the older name of the section, still
/// read (with a deprecation line in the log at start) when `calls` does not set the key.
public struct CallSettings: Sendable {
    /// Provider instance (type apns) for iOS devices; PushKit pushes go to `<topic>.voip`.
    public var apnsProvider: String?
    /// Provider instance (type fcm) for Android devices.
    public var fcmProvider: String?
    /// How long a call invite sent over the device's websocket channel waits for its confirm before the push goes out.
    public var channelConfirmTimeoutMs = 3000

    public init() {}
}

extension PushRelayConfig {
    static let callKeys: Set<String> = ["apns_provider", "fcm_provider", "channel_confirm_timeout_ms"]

    /// Reads `calls.*`, falling back to `voip.*` key by key; each key read under the old name adds a deprecation.
    mutating func readCalls(_ r: ConfigTreeReader) throws {
        func key(_ name: String) -> String {
            if r.has("calls.\(name)") || !r.has("voip.\(name)") { return "calls.\(name)" }
            deprecations.append(Deprecation(key: "voip.\(name)", replacement: "calls.\(name)"))
            return "voip.\(name)"
        }
        calls.apnsProvider = try providerName(r, key("apns_provider"), type: "apns")
        calls.fcmProvider = try providerName(r, key("fcm_provider"), type: "fcm")
        if let v = try r.int(key("channel_confirm_timeout_ms"), range: 100...60_000) { calls.channelConfirmTimeoutMs = v }
    }
}

/// A config key read under an older name: the server logs it at start, so the file can be updated.
public struct Deprecation: Sendable, Equatable {
    public var key: String
    public var replacement: String

    public init(key: String, replacement: String) {
        self.key = key
        self.replacement = replacement
    }
}
