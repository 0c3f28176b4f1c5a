import Foundation
import PushRelayCore
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

@testable import PushRelayServer

/// The reverse-proxy config `docs/deployment.md` gives, run in Debian's nginx in front of a real server with
/// `http.trusted_proxies: ["127.0.0.1"]`: the push channel counts each device by the address nginx forwards, not by
/// nginx's own. The devices connect to nginx from addresses of their own (127.0.0.2, 127.0.0.3, …). Without
/// `X-Forwarded-For` in the documented websocket block, every device is 127.0.0.1: the 17th bound device is refused
/// `too_many_channels` (`channel.max_channels_per_address`, 16), and one address's failed logins lock out every other.
@Suite struct PushChannelBehindNginxTests {
    static let proxied = "http:\n  trusted_proxies: [\"127.0.0.1\"]\n"

    static func token(_ n: Int) -> String { "nginx-device-\(n):" + String(repeating: "n", count: 40) }

    /// Runs `body` with a server behind the documented nginx, both stopped whatever the outcome.
    static func behindNginx(_ body: @escaping @Sendable (TestServer, DocumentedNginx) async throws -> Void) async throws {
        try await TestServer.with(yaml: proxied) { s in
            let nginx = try await DocumentedNginx.start(upstream: s.port)
            do {
                try await body(s, nginx)
            } catch {
                await nginx.stop()
                throw error
            }
            await nginx.stop()
        }
    }

    @Test func twentyBoundDevicesFromTwentyAddressesAllGetTheirChannel() async throws {
        try await Self.behindNginx { s, nginx in
            for n in 1...20 { try await s.bind(Self.token(n), webhookID: "nginx-hook-\(n)") }
            let port = nginx.port
            let answers = try await onThread { () -> [String] in
                var open: [BoundWebSocket] = []
                var answers: [String] = []
                for n in 1...20 {
                    let device = try BoundWebSocket(from: "127.0.0.\(n + 1)", port: port)
                    _ = try device.receive()
                    device.send(["type": "auth", "access_token": .string(Self.token(n))])
                    guard try device.receive()?["type"] == "auth_ok" else {
                        answers.append("device \(n): no auth_ok")
                        continue
                    }
                    device.send([
                        "id": 1, "type": "mobile_app/push_notification_channel", "webhook_id": .string("nginx-hook-\(n)"),
                        "support_confirm": true,
                    ])
                    let result = try device.receive()
                    answers.append(result?["success"] == true ? "ok" : "device \(n): \(result.map { "\($0)" } ?? "closed")")
                    open.append(device)
                }
                return answers
            }
            #expect(answers == Array(repeating: "ok", count: 20), "\(nginx.errors)")
        }
    }

    @Test func oneAddressesFailedLoginsLockOutThatAddressOnly() async throws {
        try await Self.behindNginx { _, nginx in
            let port = nginx.port
            let (guesser, device) = try await onThread { () -> (JSONValue?, JSONValue?) in
                // security.max_failed_auths_per_minute is 10: twelve guesses from 127.0.0.30.
                for _ in 1...12 {
                    let guess = try BoundWebSocket(from: "127.0.0.30", port: port)
                    _ = try guess.receive()
                    guess.send(["type": "auth", "access_token": "short"])
                    guard try guess.receive()?["type"] == "auth_invalid" else { return (nil, nil) }
                }
                // The guesser's address is locked out, a real token included.
                let again = try BoundWebSocket(from: "127.0.0.30", port: port)
                _ = try again.receive()
                again.send(["type": "auth", "access_token": .string(Self.token(1))])
                let locked = try again.receive()
                // A device on another address is not.
                let other = try BoundWebSocket(from: "127.0.0.31", port: port)
                _ = try other.receive()
                other.send(["type": "auth", "access_token": .string(Self.token(2))])
                return (locked, try other.receive())
            }
            #expect(guesser?["type"] == "auth_invalid")
            #expect(guesser?["message"]?.stringValue?.contains("Too many failed") == true, "\(String(describing: guesser))")
            #expect(device?["type"] == "auth_ok", "\(String(describing: device)) \(nginx.errors)")
        }
    }
}
