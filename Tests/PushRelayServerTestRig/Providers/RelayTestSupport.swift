import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayTestSupport

/// Runs a PushRelay whose relay and VoIP API use providers `apns` and `fcm` pointed at freshly started fakes.
package func withRelayFakes(
    clock: ManualClock = ManualClock(Date(), timers: .real),
    configure: @escaping (inout PushRelayConfig) -> Void = { _ in },
    _ body: @Sendable (TestServer, FakeProviderEnvironment) async throws -> Void
) async throws {
    // The provider JWT is stamped with the server's clock and checked by the fake against the real one.
    try await withProviderFakes(
        apps: [.init(match: "*", provider: "fcm")],
        clock: clock,
        configure: { c in
            c.relay.apnsProvider = "apns"
            c.relay.fcmProvider = "fcm"
            c.calls.apnsProvider = "apns"
            c.calls.fcmProvider = "fcm"
            configure(&c)
        },
        body
    )
}

extension TestServer {
    /// A raw (non-JSON) POST, as a WebPush sender makes it.
    package func rawPost(_ path: String, body: [UInt8], headers: [(String, String)]) async throws -> HTTPReply {
        var req = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        req.method = .POST
        for (k, v) in headers { req.headers.add(name: k, value: v) }
        req.body = .bytes(ByteBuffer(bytes: body))
        let response = try await HTTPClient.shared.execute(req, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 1024 * 1024)
        return HTTPReply(status: Int(response.status.code), headerLines: response.headers, body: String(buffer: buffer))
    }

    package func bearerPost(_ path: String, _ body: JSONValue, key: String?) async throws -> HTTPReply {
        try await request(.POST, path, body: body.jsonString(), headers: key.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }
}
