/// The push channel's settings, with their defaults: `channel.*`, which `PushRelayConfiguration` reads into it.
public struct PushChannelSettings: Sendable {
    /// How long a confirmable message may stay unconfirmed before it goes to the cloud route.
    public var confirmTimeoutMs = 10_000
    /// How long a queued message waits for its device (`fallback: false` and local-only apps); then it is dropped.
    public var offlineTTLms: Int64 = 24 * 3_600_000
    /// Subscriptions held at once; past it a subscribe gets `too_many_channels`. Channels Home Assistant has not
    /// paired yet (provisional ones) may take at most half of them (`maxProvisionalChannels`).
    public var maxChannels = 20_000
    /// Subscriptions held at once by one client address (an IPv6 client's /64); past it a subscribe gets
    /// `too_many_channels`. A household's devices behind one NAT fit many times over.
    public var maxChannelsPerAddress = 16
    /// Messages stored for one push token (queued for a local-only app or an offline device, or unconfirmed); past it
    /// a local-only notification for the token is refused (429). A day of notifications for a device that is away.
    public var maxQueuedPerToken = 100
    /// Bytes of notification JSON stored for every device together; past it a local-only notification is refused
    /// (503). 64 MiB holds tens of thousands of typical notifications and is harmless on a small disk.
    public var maxQueuedBytes = 64 * 1024 * 1024
    /// Unconfirmed messages per channel; past it new notifications take the cloud route.
    public var maxPending = 100
    /// Largest websocket frame accepted from a client, in bytes.
    public var maxFrameBytes = 65_536
    /// Frames waiting to be written to one connection; a reader slower than this is closed (its messages fall back).
    public var outboundBuffer = 256
    /// Bytes of frames waiting to be written to one connection (the one being written included); past it the
    /// connection is closed as for `outboundBuffer`. A single frame larger than this still goes to an empty queue.
    public var outboundBufferBytes = 1024 * 1024
    /// Time a client has to authenticate after connecting.
    public var authTimeoutMs = 10_000
    /// Server pings; a connection that does not answer is closed.
    public var pingIntervalMs = 30_000

    public init() {}

    /// How many of `maxChannels` provisional channels (a push token's, before Home Assistant has sent its pair) may
    /// take: half, so that paired devices always find room.
    public var maxProvisionalChannels: Int { Self.provisionalShare(of: maxChannels) }

    /// The provisional channels' share of `maxChannels` channels: half, at least one.
    static func provisionalShare(of maxChannels: Int) -> Int { max(1, maxChannels / 2) }
}
