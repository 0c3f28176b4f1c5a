/// `calls.*`: call-invite pushes (`/api/v1/devices`, `/api/v1/calls`). `voip.*` is the older name of the section, still
/// read (with a deprecation line in the log at start) when `calls` does not set the key.
public struct CallSettings: Sendable {
    /// Provider instance (type apns) for iOS devices; PushKit pushes go to `<topic>.voip`.
    public var apnsProvider: String?
    /// Provider instance (type fcm) for Android devices.
    public var fcmProvider: String?
    /// How long a call invite sent over the device's push channel waits for its confirm before the push goes out.
    public var channelConfirmTimeoutMs = 3000

    public init() {}
}

extension PushRelayConfig {
    /// Also the keys of `voip:`, the section's older name. No variable sets them.
    static let callKeys: [ConfigKey] = [.fileOnly("apns_provider"), .fileOnly("fcm_provider"), .fileOnly("channel_confirm_timeout_ms")]
}

extension CallSettings {
    /// Reads `calls.*` over the defaults (after `providers`: the providers it names must exist with the right type),
    /// falling back to `voip.*` key by key; each key read under the old name is appended to `deprecations`.
    package init(reading r: ConfigTreeReader, providers: ProviderReferences, deprecations: inout [Deprecation]) throws {
        self.init()
        var found: [Deprecation] = []
        func key(_ name: String) -> String {
            if r.has("calls.\(name)") || !r.has("voip.\(name)") { return "calls.\(name)" }
            found.append(Deprecation(key: "voip.\(name)", replacement: "calls.\(name)"))
            return "voip.\(name)"
        }
        apnsProvider = try providers.name(r, key("apns_provider"), type: "apns")
        fcmProvider = try providers.name(r, key("fcm_provider"), type: "fcm")
        if let v = try r.int(key("channel_confirm_timeout_ms"), range: 100...60_000) { channelConfirmTimeoutMs = v }
        deprecations += found
    }
}
