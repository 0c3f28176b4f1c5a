import PushRelayConfiguration
import PushRelayCore
import Testing

/// What the push channel's tests and the tests that reach a device through it share: a config whose apps go by a
/// cloud route that confirms, a Home Assistant notification, push tokens, and a websocket client authenticated and
/// subscribed as the companion app does.
package enum PushChannelRig {
    package static let token = "channel-test-token:" + String(repeating: "x", count: 40)

    package static func cloud(
        _ confirmMs: Int = 10_000,
        _ extra: @escaping (inout PushRelayConfig) -> Void = { _ in }
    ) -> (inout PushRelayConfig) -> Void {
        { c in
            c.apps = [.init(match: "io.local.*", provider: AppProviders.localOnly), .init(match: "*", provider: "cloud")]
            c.channel.confirmTimeoutMs = confirmMs
            extra(&c)
        }
    }

    package static func body(
        _ message: String = "Hello",
        token: String = PushChannelRig.token,
        appID: String = "io.homeassistant.companion.android",
        webhookID: String = "hook-1"
    ) -> JSONValue {
        [
            "message": .string(message), "push_token": .string(token), "data": ["tag": "t"],
            "registration_info": ["app_id": .string(appID), "webhook_id": .string(webhookID)],
        ]
    }

    package static let localApp = "io.local.app"

    package static func token(_ name: String) -> String { "\(name)-push-token:" + String(repeating: "t", count: 40) }

    /// Connects from `address` (named by `X-Forwarded-For` to a server that trusts 127.0.0.1) and authenticates.
    package static func authenticated(_ s: TestServer, _ token: String, from address: String? = nil) async throws -> WSTestClient {
        let c = WSTestClient.connect(port: s.port, headers: address.map { [("X-Forwarded-For", $0)] } ?? [])
        #expect(try await c.receive()["type"] == "auth_required")
        c.send(["type": "auth", "access_token": .string(token)])
        #expect(try await c.receive()["type"] == "auth_ok")
        return c
    }

    /// Subscribes `c` to `webhookID` and returns the result.
    package static func subscribe(_ c: WSTestClient, webhookID: String, id: Int64 = 1) async throws -> JSONValue {
        c.send(["id": .int(id), "type": "mobile_app/push_notification_channel", "webhook_id": .string(webhookID), "support_confirm": true])
        return try await c.receive()
    }
}
