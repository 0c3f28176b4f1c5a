import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayHomeAssistant
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import Testing

@testable import PushRelayServer

/// Home Assistant's routes closed by `home_assistant.keys` and `home_assistant.allowed_networks`, on both HTTP paths
/// (the notify fast path in the pipeline and the router): refusals (401, 403, then 429 once the address's failed
/// credential checks are used up), acceptance with a key, and a trusted post binding its pair.
///
/// Load: failed credential checks until the address's budget is spent, each answer held to a 10 s client limit.
@Suite struct HomeAssistantAccessTests {
    static let key = "k3y-0f-h0me-assistant-1234"

    static func body(_ message: String = "Hello", token: String = PushChannelRig.token("device"), appID: String = "io.app") -> JSONValue {
        PushChannelRig.body(message, token: token, appID: appID, webhookID: "hook-1")
    }

    static func withServer(
        pipeline: Bool,
        _ configure: @escaping (inout PushRelayConfig) -> Void,
        _ body: @Sendable (TestServer, ScriptedProvider) async throws -> Void
    ) async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        try await TestServer.with(providers: ["cloud": cloud], notifyInPipeline: pipeline, configure: PushChannelRig.cloud(10_000, configure)) {
            s in
            try await body(s, cloud)
        }
    }

    static func expectError(_ r: HTTPReply, _ status: Int, _ type: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status == status, "\(r.rawBody)", sourceLocation: sourceLocation)
        #expect(r["errorType"] == .string(type), "\(r.rawBody)", sourceLocation: sourceLocation)
        #expect(r["message"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    }

    @Test(arguments: [true, false])
    func aKeyClosesTheRoutes(pipeline: Bool) async throws {
        try await Self.withServer(
            pipeline: pipeline,
            { c in
                c.homeAssistant.keys = ["another-key-of-16-chars", Self.key]
                c.maxFailedAuthsPerMinute = 3
            }
        ) { s, cloud in
            let path = "/api/sendPush/android/v1"
            Self.expectError(try await s.post(path, Self.body()), 401, "InvalidKey")
            Self.expectError(try await s.post(path + "?key=wrong-key-wrong-key", Self.body()), 401, "InvalidKey")
            let accepted = try await s.post(path + "?key=\(Self.key)", Self.body())
            #expect(accepted.status == 201, "\(accepted.rawBody)")
            #expect(cloud.callCount == 1, "only the post with the key reached the provider")
            // checkRateLimits is closed too (on the router), and the third failure used up the address's budget…
            Self.expectError(try await s.post("/api/checkRateLimits", ["push_token": "x"]), 401, "InvalidKey")
            // …so even the right key is refused for the rest of the minute.
            Self.expectError(try await s.post(path + "?key=\(Self.key)", Self.body()), 429, "TooManyFailedAttempts")
            #expect(cloud.callCount == 1)
        }
    }

    @Test(arguments: [true, false])
    func anAllowListClosesTheRoutesToOtherAddresses(pipeline: Bool) async throws {
        try await Self.withServer(
            pipeline: pipeline,
            { c in
                c.homeAssistant.allowedNetworks = [OutboundAddressPolicy.Network(cidr: "192.168.1.0/24")!]
                c.http.trustedProxies = TrustedProxies(networks: [OutboundAddressPolicy.Network(cidr: "127.0.0.1/32")!])
            }
        ) { s, cloud in
            let path = "/api/sendPush/android/v1"
            let outside = try await s.request(.POST, path, body: Self.body().jsonString(), headers: [("X-Forwarded-For", "198.51.100.7")])
            Self.expectError(outside, 403, "AddressNotAllowed")
            Self.expectError(try await s.post(path, Self.body()), 403, "AddressNotAllowed")
            let inside = try await s.request(.POST, path, body: Self.body().jsonString(), headers: [("X-Forwarded-For", "192.168.1.20")])
            #expect(inside.status == 201, "\(inside.rawBody)")
            #expect(cloud.callCount == 1)
        }
    }

    @Test func aTrustedPostBindsALocalOnlyAppsPair() async throws {
        try await Self.withServer(pipeline: true, { $0.homeAssistant.keys = [Self.key] }) { s, _ in
            let token = PushChannelRig.token("device")
            let device = try await PushChannelRig.authenticated(s, token)
            #expect(try await PushChannelRig.subscribe(device, webhookID: "hook-1")["success"] == true)
            // A local-only app has no provider to check its token: through a closed route Home Assistant's post
            // itself binds the pair.
            let r = try await s.post(
                "/api/sendPush/android/v1?key=\(Self.key)",
                Self.body("trusted", token: token, appID: PushChannelRig.localApp)
            )
            #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == true, "\(r.rawBody)")
            #expect(try await device.receive()["event"]?["message"] == "trusted")
            #expect(
                try await SQLitePushChannelStore(database: s.database).bindings() == [PushChannelBinding(pushToken: token, webhookID: "hook-1")]
            )
        }
    }

    @Test func keysAndNetworksAreReadFromTheConfig() throws {
        let config = try PushRelayConfig(
            tree: ["home_assistant": ["keys": .array([.string(Self.key)]), "allowed_networks": "192.168.1.0/24, fd00::/8"]]
        )
        #expect(config.homeAssistant.keys == [Self.key])
        #expect(config.homeAssistant.allowedNetworks.count == 2)
        #expect(throws: ConfigError.self) { try PushRelayConfig(tree: ["home_assistant": ["keys": .array(["short"])]]) }
        #expect(throws: ConfigError.self) { try PushRelayConfig(tree: ["home_assistant": ["keys": .array([.string(Self.key + "&x=1")])]]) }
        #expect(throws: ConfigError.self) { try PushRelayConfig(tree: ["home_assistant": ["allowed_networks": .array(["not a network"])]]) }
        #expect(HomeAssistantAccess.key(in: "/api/sendPush/android/v1?x=1&key=a%2Db") == "a-b")
        #expect(HomeAssistantAccess.key(in: "/api/sendPush/android/v1") == nil)
    }
}
