import PushRelayCore

/// `channel.*`: the push channel.
public struct PushChannelSettings: Sendable {
    /// How long a confirmable message may stay unconfirmed before it goes to the cloud route.
    public var confirmTimeoutMs = 10_000
    /// How long a queued message waits for its device (`fallback: false` and local-only apps); then it is dropped.
    public var offlineTTLms: Int64 = 24 * 3_600_000
    /// Subscriptions held at once; past it a subscribe gets `too_many_channels`.
    public var maxChannels = 20_000
    /// Unconfirmed messages per channel; past it new notifications take the cloud route.
    public var maxPending = 100
    /// Largest websocket frame accepted from a client, in bytes.
    public var maxFrameBytes = 65_536
    /// Frames waiting to be written to one connection; a reader slower than this is closed (its messages fall back).
    public var outboundBuffer = 256
    /// Time a client has to authenticate after connecting.
    public var authTimeoutMs = 10_000
    /// Server pings; a connection that does not answer is closed.
    public var pingIntervalMs = 30_000

    public init() {}
}

extension PushRelayConfig {
    /// `channel.max_failed_auths_per_minute` is the older name of `security.max_failed_auths_per_minute`
    /// (`SecurityConfig.swift` reads both).
    static let channelKeys: Set<String> = [
        "confirm_timeout_ms", "offline_ttl", "max_channels", "max_pending", "max_frame_bytes", "outbound_buffer",
        "auth_timeout_ms", "ping_interval_ms", "max_failed_auths_per_minute",
    ]
}

extension PushChannelSettings {
    /// Reads `channel.*` over the defaults.
    init(reading r: ConfigTreeReader) throws {
        self.init()
        if let v = try r.int("channel.confirm_timeout_ms", range: 100...600_000) { confirmTimeoutMs = v }
        if let ms = try r.durationMs("channel.offline_ttl") { offlineTTLms = ms }
        if let v = try r.int("channel.max_channels", range: 1...1_000_000) { maxChannels = v }
        if let v = try r.int("channel.max_pending", range: 1...100_000) { maxPending = v }
        if let v = try r.int("channel.max_frame_bytes", range: 1024...(16 * 1024 * 1024)) { maxFrameBytes = v }
        if let v = try r.int("channel.outbound_buffer", range: 1...100_000) { outboundBuffer = v }
        if let v = try r.int("channel.auth_timeout_ms", range: 100...600_000) { authTimeoutMs = v }
        if let v = try r.int("channel.ping_interval_ms", range: 1000...3_600_000) { pingIntervalMs = v }
    }
}
