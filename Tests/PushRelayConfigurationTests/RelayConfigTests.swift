import PushRelayConfiguration
import PushRelayCore
import PushRelayWebPushRelay
import Testing

/// `relay.*`: the WebPush relay.
@Suite struct RelayConfigTests {
    static let providers = ProviderReferences([
        "ios": .init(name: "ios", type: "apns"), "android": .init(name: "android", type: "fcm"),
    ])

    func read(_ relay: JSONValue) throws -> WebPushRelaySettings {
        try WebPushRelaySettings(reading: ConfigTreeReader(tree: ["relay": relay]), providers: Self.providers)
    }

    func problem(_ relay: JSONValue) -> String { configProblem { _ = try read(relay) } }

    @Test func defaultsAndEveryKey() throws {
        let d = try read([:])
        #expect(d.apnsProvider == nil && d.fcmProvider == nil && d.alertText == "New notification" && d.unsubscribeAllowedHosts.isEmpty)
        #expect(d.dailyLimitPerToken == 0 && d.maxRequestsPerMinutePerAddress == 0 && d.maxBodyBytes == 8192)
        let r = try read([
            "apns_provider": "ios", "fcm_provider": "android", "alert_text": "New toot",
            "unsubscribe_allowed_hosts": ["Mastodon.Example", "[fd00::1]"],
            "unsubscribe_allowed_private_networks": ["10.0.0.0/8"], "daily_limit_per_token": 50, "max_requests_per_minute_per_address": 60,
            "max_body_bytes": 4096,
        ])
        #expect(r.apnsProvider == "ios" && r.fcmProvider == "android" && r.alertText == "New toot")
        #expect(r.unsubscribeAllowedHosts == ["mastodon.example", "[fd00::1]"])
        #expect(r.unsubscribeAddressPolicy.allowedNetworks.map(\.description) == ["10.0.0.0/8"])
        #expect(r.dailyLimitPerToken == 50 && r.maxRequestsPerMinutePerAddress == 60 && r.maxBodyBytes == 4096)
    }

    @Test func errorsNameTheKey() {
        #expect(problem(["apns_provider": "android"]) == "relay.apns_provider: names 'android', a fcm provider; it must be a apns provider")
        #expect(
            problem(["fcm_provider": "web"]) == "relay.fcm_provider: names 'web', which is not defined under 'providers' (defined: android, ios)"
        )
        #expect(problem(["alert_text": ""]) == "relay.alert_text: must be 1 to 256 bytes of text")
        #expect(
            problem(["unsubscribe_allowed_hosts": ["ok.example", "https://x.example"]])
                == "relay.unsubscribe_allowed_hosts[1]: must be a host name such as mastodon.example (no scheme, port or path)"
        )
        #expect(
            problem(["unsubscribe_allowed_private_networks": ["10.0.0.0/8", 7]])
                == "relay.unsubscribe_allowed_private_networks[1]: must be a network in CIDR form, such as 10.0.0.0/8 or fd00::/8"
        )
        #expect(problem(["max_body_bytes": 100_000]) == "relay.max_body_bytes: must be a whole number from 4096 to 65536; got 100000")
    }

    @Test func anEmptyProviderNameIsNoProvider() throws {
        #expect(try read(["apns_provider": ""]).apnsProvider == nil)
    }
}
