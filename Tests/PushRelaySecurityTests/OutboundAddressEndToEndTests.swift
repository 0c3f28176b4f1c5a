import Foundation
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

/// The running server never connects to a loopback address a caller chose (WebPush endpoint, `Unsubscribe-URL`),
/// by IP or by a name that resolves there, unless the config allows that network.
@Suite struct OutboundAddressEndToEndTests {
    @Test func aMatrixWebPushEndpointOnLoopbackIsNotContactedWithoutAnAllowance() async throws {
        try await withMatrix(configure: { c in
            c.providers["web"]?.options["allowed_private_networks"] = nil
            c.providers["web"]?.options["allowed_endpoints"] = ["127.0.0.1:*", "localhost:*"]
        }) { s, f in
            let sub = f.web.subscribe()
            let byName = sub.endpoint.replacingOccurrences(of: "127.0.0.1", with: "localhost")
            for endpoint in [sub.endpoint, byName] {
                let r = try await s.notify(message, devices: [webDevice(sub, data: ["endpoint": .string(endpoint)])])
                // Dropped as a gateway policy, as for an endpoint outside allowed_endpoints: the pushkey is not rejected.
                #expect(r.status == 200, "\(r.rawBody)")
                #expect(r.json == ["rejected": []], "\(endpoint): \(r.rawBody)")
            }
            #expect(f.web.records.isEmpty, "nothing reached the push service on loopback")
        }
    }

    @Test func anUnsubscribeURLOnLoopbackGetsNoDeleteWithoutAnAllowance() async throws {
        let listener = try #require(DeleteListener())
        defer { listener.stop() }
        try await withRelayFakes(configure: { c in c.relay.unsubscribeAllowedHosts = ["localhost", "127.0.0.1"] }) { s, env in
            for host in ["localhost", "127.0.0.1"] {
                env.fcm.script("dead:\(host)", [.unregistered])
                let r = try await s.rawPost(
                    "/relay-to/fcm/dead:\(host)",
                    body: [1, 2, 3],
                    headers: [("Content-Encoding", "aes128gcm"), ("Unsubscribe-URL", "http://\(host):\(listener.port)/unsubscribe")]
                )
                expectJSONError(r, status: 410, errorType: "InvalidToken")
            }
            try await consistently("no DELETE reaches the listener", for: .milliseconds(500)) { listener.requests.isEmpty }
        }
    }

    @Test func anAllowedNetworkGetsTheDelete() async throws {
        let listener = try #require(DeleteListener())
        defer { listener.stop() }
        try await withRelayFakes(configure: { c in
            c.relay.unsubscribeAllowedHosts = ["127.0.0.1"]
            c.relay.unsubscribeAddressPolicy = OutboundAddressPolicy(allowedNetworks: [OutboundAddressPolicy.Network(cidr: "127.0.0.1/32")!])
        }) { s, env in
            env.fcm.script("dead:allowed", [.unregistered])
            let r = try await s.rawPost(
                "/relay-to/fcm/dead:allowed",
                body: [1, 2, 3],
                headers: [("Content-Encoding", "aes128gcm"), ("Unsubscribe-URL", "http://127.0.0.1:\(listener.port)/unsubscribe/7")]
            )
            expectJSONError(r, status: 410, errorType: "InvalidToken")
            try await eventually("the DELETE arrives") { !listener.requests.isEmpty }
            #expect(listener.requests.first?.hasPrefix("DELETE /unsubscribe/7 ") == true, "\(listener.requests)")
        }
    }
}

/// A loopback HTTP listener that records each request line and answers 204.
final class DeleteListener: @unchecked Sendable {
    let port: Int
    private let fd: Int32
    private let lock = NSLock()
    private var lines: [String] = []
    private var stopped = false

    var requests: [String] { lock.withLock { lines } }

    init?() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
                bind(fd, p, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, p, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            return nil
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: addr.sin_port))
        Thread { [self] in serve() }.start()
    }

    func stop() {
        lock.withLock { stopped = true }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    private func serve() {
        while !lock.withLock({ stopped }) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let n = recv(client, &buffer, buffer.count, 0)
            if n > 0 {
                let text = String(decoding: buffer[0..<n], as: UTF8.self)
                lock.withLock { lines.append(text.components(separatedBy: "\r\n").first ?? "") }
            }
            let answer = Array("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".utf8)
            _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(client)
        }
    }
}
