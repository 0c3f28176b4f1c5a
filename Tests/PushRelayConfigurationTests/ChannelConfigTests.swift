import PushRelayConfiguration
import Testing

/// `channel.*`: the push channel.
@Suite struct ChannelConfigTests {
    @Test func defaultsAndOverrides() throws {
        let d = try PushRelayConfig.load(file: nil, environment: [:]).channel
        #expect(d.confirmTimeoutMs == 10_000 && d.offlineTTLms == 86_400_000 && d.maxChannels == 20_000 && d.maxPending == 100)
        #expect(d.maxFrameBytes == 65_536 && d.outboundBuffer == 256 && d.authTimeoutMs == 10_000 && d.pingIntervalMs == 30_000)
        let c = try PushRelayConfig.load(
            file: nil,
            environment: [
                "PUSHRELAY_CHANNEL_CONFIRM_TIMEOUT_MS": "2000", "PUSHRELAY_CHANNEL_OFFLINE_TTL": "2h", "PUSHRELAY_CHANNEL_MAX_CHANNELS": "10",
                "PUSHRELAY_CHANNEL_MAX_PENDING": "5", "PUSHRELAY_CHANNEL_MAX_FRAME_BYTES": "4096", "PUSHRELAY_CHANNEL_OUTBOUND_BUFFER": "8",
                "PUSHRELAY_CHANNEL_AUTH_TIMEOUT_MS": "500", "PUSHRELAY_CHANNEL_PING_INTERVAL_MS": "1000",
            ]
        ).channel
        #expect(c.confirmTimeoutMs == 2000 && c.offlineTTLms == 7_200_000 && c.maxChannels == 10 && c.maxPending == 5)
        #expect(c.maxFrameBytes == 4096 && c.outboundBuffer == 8 && c.authTimeoutMs == 500 && c.pingIntervalMs == 1000)
    }

    @Test func theBoundsAStrangerCouldFill() throws {
        let d = try PushRelayConfig.load(file: nil, environment: [:]).channel
        #expect(d.maxChannelsPerAddress == 16 && d.maxQueuedPerToken == 100 && d.maxQueuedBytes == 64 * 1024 * 1024)
        #expect(d.maxProvisionalChannels == 10_000)
        let c = try PushRelayConfig.load(
            file: nil,
            environment: [
                "PUSHRELAY_CHANNEL_MAX_CHANNELS_PER_ADDRESS": "4", "PUSHRELAY_CHANNEL_MAX_QUEUED_PER_TOKEN": "7",
                "PUSHRELAY_CHANNEL_MAX_QUEUED_BYTES": "1048576", "PUSHRELAY_CHANNEL_MAX_CHANNELS": "1",
            ]
        ).channel
        #expect(c.maxChannelsPerAddress == 4 && c.maxQueuedPerToken == 7 && c.maxQueuedBytes == 1_048_576)
        #expect(c.maxProvisionalChannels == 1, "a server of one channel still admits a device before Home Assistant's first notification")
        #expect(
            configProblem(["channel": ["max_queued_bytes": 1000]])
                == "channel.max_queued_bytes: must be a whole number from 65536 to 1099511627776; got 1000"
        )
        #expect(
            configProblem(["channel": ["max_channels_per_address": 0]])
                == "channel.max_channels_per_address: must be a whole number from 1 to 1000000; got 0"
        )
    }

    @Test func errorsNameTheKey() {
        #expect(
            configProblem(["channel": ["confirm_timeout_ms": 10]]) == "channel.confirm_timeout_ms: must be a whole number from 100 to 600000; got 10"
        )
        #expect(
            configProblem(["channel": ["offline_ttl": "later"]])
                == "channel.offline_ttl: must be a duration such as 3600 (seconds), 90m, 24h or 7d; got 'later'"
        )
        #expect(
            configProblem(["channel": ["max_frame_bytes": 100]]) == "channel.max_frame_bytes: must be a whole number from 1024 to 16777216; got 100"
        )
        #expect(
            configProblem(["channel": ["ping_interval_ms": 999]]) == "channel.ping_interval_ms: must be a whole number from 1000 to 3600000; got 999"
        )
        #expect(configProblem(["channel": ["max_pings": 1]]).hasPrefix("channel.max_pings: unknown key (known: auth_timeout_ms, "))
    }
}
