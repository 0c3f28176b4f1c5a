import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayPushChannel
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import Testing

@testable import PushRelayServer

/// The stores a stranger could fill through the push channel, each bounded: the local-only queue (per push token and in
/// total, answered 429 and 503 over HTTP) and the channels (per client address, and the share of channels Home
/// Assistant has not paired), over a real server on loopback with a real SQLite file.
///
/// Load: the queue and the channels filled to their bounds at once, each answer held to a 10 s client limit.
@Suite struct StrangerBoundsTests {

    /// A local-only app's notification for `token`, padded with `padding` bytes of data.
    static func localOnly(_ message: String, token: String, webhookID: String = "hook-1", padding: Int = 0) -> JSONValue {
        var body = PushChannelRig.body(message, token: token, appID: PushChannelRig.localApp, webhookID: webhookID)
        if padding > 0, case .object(var o) = body {
            o["data"] = ["pad": .string(String(repeating: "p", count: padding))]
            body = .object(o)
        }
        return body
    }

    static func stored(_ s: TestServer, token: String) async throws -> Int {
        try await SQLitePushChannelStore(database: s.database).storedCount(pushToken: token)
    }

    static func expectTooManyChannels(_ reply: JSONValue, naming key: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply["success"] == false, "\(reply)", sourceLocation: sourceLocation)
        #expect(reply["error"]?["code"] == "too_many_channels", "\(reply)", sourceLocation: sourceLocation)
        #expect(reply["error"]?["message"]?.stringValue?.contains(key) == true, "\(reply)", sourceLocation: sourceLocation)
    }

    // MARK: The local-only queue

    @Test func strangerCannotFillADevicesLocalOnlyQueue() async throws {
        let configure = PushChannelRig.cloud { $0.channel.maxQueuedPerToken = 3 }
        try await TestServer.with(providers: ["cloud": ScriptedProvider(name: "cloud", [.deliver])], configure: configure) { s in
            let device = PushChannelRig.token("device")
            for i in 1...3 {
                let r = try await s.android(Self.localOnly("queued \(i)", token: device))
                #expect(r.status == 201, "\(r.rawBody)")
            }
            let refused = try await s.android(Self.localOnly("one too many", token: device))
            expectJSONError(refused, status: 429, errorType: "DeviceQueueFull")
            #expect(
                refused["message"]?.stringValue?.contains("The device has 3 notifications waiting for its push channel") == true,
                "\(refused.rawBody)"
            )
            #expect(refused["target"] == .string(device))
            #expect(refused.headers["retry-after"] == nil)
            // Nothing stored, nothing counted.
            #expect(try await Self.stored(s, token: device) == 3)
            let limits = try await s.post("/api/checkRateLimits", ["push_token": .string(device)])
            #expect(limits.int("rateLimits", "attempts") == 0 && limits.int("rateLimits", "total") == 0, "\(limits.rawBody)")
            // Another device's queue is its own.
            #expect(try await s.android(Self.localOnly("for someone else", token: PushChannelRig.token("other"), webhookID: "hook-2")).status == 201)

            // The device connects and takes its notifications: room again.
            let ws = try await WSTestClient.subscribed(port: s.port, token: device, webhookID: "hook-1", supportConfirm: false)
            var received: Set<String> = []
            for _ in 1...3 { received.insert(try await ws.receive()["event"]?["message"]?.stringValue ?? "?") }
            #expect(received == ["queued 1", "queued 2", "queued 3"])
            for _ in 0..<500 {
                if try await Self.stored(s, token: device) == 0 { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(try await Self.stored(s, token: device) == 0)
            ws.close()
            #expect(await ws.waitUntilClosed())
            #expect(try await s.android(Self.localOnly("after the device came by", token: device)).status == 201)
        }
    }

    @Test func concurrentStrangersCannotPassADevicesBoundTogether() async throws {
        let configure = PushChannelRig.cloud { $0.channel.maxQueuedPerToken = 5 }
        try await TestServer.with(providers: ["cloud": ScriptedProvider(name: "cloud", [.deliver])], configure: configure) { s in
            let device = PushChannelRig.token("device")
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<30 { group.addTask { try await s.android(Self.localOnly("at once \(i)", token: device)).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 5, "\(statuses)")
            #expect(statuses.filter { $0 == 429 }.count == 25, "\(statuses)")
            #expect(try await Self.stored(s, token: device) == 5)
        }
    }

    @Test func strangersCannotFillTheLocalOnlyQueueOfEveryDevice() async throws {
        let configure = PushChannelRig.cloud { $0.channel.maxQueuedBytes = 65_536 }
        try await TestServer.with(providers: ["cloud": ScriptedProvider(name: "cloud", [.deliver])], configure: configure) { s in
            // 20 KB each, every one for a made-up token of its own: three fit in 64 KiB, the fourth does not.
            for i in 1...3 {
                let r = try await s.android(
                    Self.localOnly("stranger \(i)", token: PushChannelRig.token("made-up-\(i)"), webhookID: "hook-\(i)", padding: 20_000)
                )
                #expect(r.status == 201, "\(r.rawBody)")
            }
            let fourth = PushChannelRig.token("made-up-4")
            let refused = try await s.android(Self.localOnly("stranger 4", token: fourth, webhookID: "hook-4", padding: 20_000))
            expectJSONError(refused, status: 503, errorType: "QueueFull")
            #expect(refused["message"]?.stringValue?.contains("channel.max_queued_bytes") == true, "\(refused.rawBody)")
            #expect(refused.headers["retry-after"] == String(LocalOnlyQueue.retryAfterSeconds))
            #expect(try await Self.stored(s, token: fourth) == 0)
            #expect(try await SQLitePushChannelStore(database: s.database).storedBytes() < 65_536)
            let limits = try await s.post("/api/checkRateLimits", ["push_token": .string(fourth)])
            #expect(limits.int("rateLimits", "attempts") == 0, "\(limits.rawBody)")
            // The refused notification bound nothing: its pair is free for whoever Home Assistant posts first.
            #expect(try await SQLitePushChannelStore(database: s.database).binding(pushToken: fourth) == nil)
        }
    }

    // MARK: The channels

    @Test func oneAddressCannotTakeEveryChannel() async throws {
        let configure: (inout PushRelayConfig) -> Void = { c in
            PushChannelRig.cloud()(&c)
            c.channel.maxChannelsPerAddress = 2
            c.http.trustedProxies = TrustedProxies(networks: [OutboundAddressPolicy.Network(cidr: "127.0.0.1/32")!])
        }
        try await TestServer.with(providers: ["cloud": ScriptedProvider(name: "cloud", [.deliver])], configure: configure) { s in
            // Two addresses of one IPv6 /64 are one client.
            var strangers: [WSTestClient] = []
            for (i, address) in ["2001:db8:1:2::1", "2001:db8:1:2::2"].enumerated() {
                let c = try await PushChannelRig.authenticated(s, PushChannelRig.token("stranger-\(i)"), from: address)
                #expect(try await PushChannelRig.subscribe(c, webhookID: "stranger-hook-\(i)")["success"] == true)
                strangers.append(c)
            }
            let third = try await PushChannelRig.authenticated(s, PushChannelRig.token("stranger-3"), from: "2001:db8:1:2::3")
            Self.expectTooManyChannels(
                try await PushChannelRig.subscribe(third, webhookID: "stranger-hook-3"),
                naming: "channel.max_channels_per_address"
            )
            // Another /64, and an IPv4 address, are clients of their own.
            let neighbour = try await PushChannelRig.authenticated(s, PushChannelRig.token("neighbour"), from: "2001:db8:1:3::1")
            #expect(try await PushChannelRig.subscribe(neighbour, webhookID: "neighbour-hook")["success"] == true)
            let v4 = try await PushChannelRig.authenticated(s, PushChannelRig.token("v4"), from: "198.51.100.7")
            #expect(try await PushChannelRig.subscribe(v4, webhookID: "v4-hook")["success"] == true)

            // A device Home Assistant has paired, behind the strangers' /64: the oldest stranger gives way.
            let device = PushChannelRig.token("device")
            #expect(try await s.android(PushChannelRig.body("pairs the device", token: device, webhookID: "device-hook")).status == 201)
            let paired = try await PushChannelRig.authenticated(s, device, from: "2001:db8:1:2::99")
            #expect(try await PushChannelRig.subscribe(paired, webhookID: "device-hook")["success"] == true)
            #expect(await strangers[0].waitUntilClosed(), "the oldest provisional channel of the address was closed")
            #expect(!strangers[1].isClosed)
            withExtendedLifetime((strangers, neighbour, v4, paired)) {}
        }
    }

    @Test func strangersCannotLockOutABoundDevice() async throws {
        let configure = PushChannelRig.cloud { $0.channel.maxChannels = 4 }
        try await TestServer.with(providers: ["cloud": ScriptedProvider(name: "cloud", [.deliver])], configure: configure) { s in
            // Random credentials: two provisional channels (half of max_channels), then no more.
            var strangers: [WSTestClient] = []
            for i in 0..<4 {
                let c = try await PushChannelRig.authenticated(s, UUID().uuidString + UUID().uuidString)
                let reply = try await PushChannelRig.subscribe(c, webhookID: "random-hook-\(i)")
                if i < 2 {
                    #expect(reply["success"] == true, "\(reply)")
                } else {
                    Self.expectTooManyChannels(reply, naming: "Home Assistant has not paired")
                }
                strangers.append(c)
            }
            // Devices Home Assistant has paired: the first two take the free half, the next two the strangers' places,
            // oldest first; the fifth finds only paired channels and is refused.
            var devices: [WSTestClient] = []
            for i in 0..<5 {
                let token = PushChannelRig.token("device-\(i)")
                #expect(try await s.android(PushChannelRig.body("pairs \(i)", token: token, webhookID: "device-hook-\(i)")).status == 201)
                let c = try await PushChannelRig.authenticated(s, token)
                let reply = try await PushChannelRig.subscribe(c, webhookID: "device-hook-\(i)")
                if i < 4 {
                    #expect(reply["success"] == true, "device \(i): \(reply)")
                } else {
                    Self.expectTooManyChannels(reply, naming: "maximum of 4 channels (channel.max_channels)")
                }
                if i == 2 { #expect(await strangers[0].waitUntilClosed()) }
                if i == 3 { #expect(await strangers[1].waitUntilClosed()) }
                devices.append(c)
            }
            // The paired devices' channels work.
            let r = try await s.android(PushChannelRig.body("for device 3", token: PushChannelRig.token("device-3"), webhookID: "device-hook-3"))
            #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == true, "\(r.rawBody)")
            #expect(try await devices[3].receive()["event"]?["message"] == "for device 3")
            withExtendedLifetime((strangers, devices)) {}
        }
    }
}
