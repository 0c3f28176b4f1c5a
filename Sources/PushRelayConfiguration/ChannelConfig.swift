import PushRelayCore
import PushRelayPushChannel

extension PushRelayConfig {
    /// `channel.max_failed_auths_per_minute` is the older name of `security.max_failed_auths_per_minute`
    /// (`SecurityConfig.swift` reads both).
    static let channelKeys: [ConfigKey] = [
        "confirm_timeout_ms", "offline_ttl", "max_channels", "max_channels_per_address", "max_pending", "max_queued_per_token",
        "max_queued_bytes", "max_frame_bytes", "outbound_buffer", "outbound_buffer_bytes", "auth_timeout_ms", "ping_interval_ms",
        "max_failed_auths_per_minute",
    ]
}

extension PushChannelSettings {
    /// Reads `channel.*` over the defaults.
    package init(reading r: ConfigTreeReader) throws {
        self.init()
        if let v = try r.int("channel.confirm_timeout_ms", range: 100...600_000) { confirmTimeoutMs = v }
        if let ms = try r.durationMs("channel.offline_ttl") { offlineTTLms = ms }
        if let v = try r.int("channel.max_channels", range: 1...1_000_000) { maxChannels = v }
        if let v = try r.int("channel.max_channels_per_address", range: 1...1_000_000) { maxChannelsPerAddress = v }
        if let v = try r.int("channel.max_pending", range: 1...100_000) { maxPending = v }
        if let v = try r.int("channel.max_queued_per_token", range: 1...100_000) { maxQueuedPerToken = v }
        if let v = try r.int("channel.max_queued_bytes", range: 65_536...(1 << 40)) { maxQueuedBytes = v }
        if let v = try r.int("channel.max_frame_bytes", range: 1024...(16 * 1024 * 1024)) { maxFrameBytes = v }
        if let v = try r.int("channel.outbound_buffer", range: 1...100_000) { outboundBuffer = v }
        if let v = try r.int("channel.outbound_buffer_bytes", range: 4096...(1 << 30)) { outboundBufferBytes = v }
        if let v = try r.int("channel.auth_timeout_ms", range: 100...600_000) { authTimeoutMs = v }
        if let v = try r.int("channel.ping_interval_ms", range: 1000...3_600_000) { pingIntervalMs = v }
    }
}
