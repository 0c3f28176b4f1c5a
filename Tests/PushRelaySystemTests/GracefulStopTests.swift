import AsyncHTTPClient
import Foundation
import NIOCore
import NIOWebSocket
import PushRelayCore
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

@testable import PushRelayServer

/// A graceful stop (`ServerLifecycle.beginStop()`, what SIGTERM calls) of one of two instances behind a load balancer
/// that follows `/ready`, under clients posting without pause: `/ready` turns 503 at once while the instance still
/// serves, every notification gets an answer (none is reset or refused), and its push channel is closed with 1012.
@Suite struct GracefulStopTests {
    /// The load balancer: sends new connections to every instance whose `/ready` answered 200 when it last asked
    /// (every 100 ms, as a load balancer's probe would).
    final class Balancer: Sendable {
        private struct State {
            var ready: [Int: Bool]
            var next = 0
            /// The first answer of each port's `/ready` that was not 200.
            var firstRefusal: [Int: HTTPReply] = [:]
        }

        private let state: Locked<State>
        let ports: [Int]

        init(ports: [Int]) {
            self.ports = ports
            state = Locked(State(ready: Dictionary(uniqueKeysWithValues: ports.map { ($0, true) })))
        }

        func route() -> Int {
            state.withLock { s in
                let ready = ports.filter { s.ready[$0] == true }
                s.next += 1
                return ready.isEmpty ? ports[0] : ready[s.next % ready.count]
            }
        }

        func firstRefusal(of port: Int) -> HTTPReply? { state.withLock { $0.firstRefusal[port] } }

        /// Probes every port until the task is cancelled.
        func probe() async {
            while !Task.isCancelled {
                for port in ports {
                    var reply: HTTPReply?
                    do {
                        let response = try await HTTPClient.shared.execute(
                            HTTPClientRequest(url: "http://127.0.0.1:\(port)/ready"),
                            timeout: .seconds(2)
                        )
                        let body = try await response.body.collect(upTo: 1 << 16)
                        reply = HTTPReply(status: Int(response.status.code), headerLines: response.headers, body: String(buffer: body))
                    } catch {}
                    state.withLock { s in
                        s.ready[port] = reply?.status == 200
                        if reply?.status != 200, s.firstRefusal[port] == nil, let reply { s.firstRefusal[port] = reply }
                    }
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    static let deviceToken = "graceful-stop-token:" + String(repeating: "g", count: 40)

    @Test func notificationsPostedThroughAStopAreAllAnswered() async throws {
        try await TestServer.with { (b: TestServer) async throws in
            // The drain outlasts the checks below even on a loaded machine (beside the timed phase they took more than 1 s).
            let load = try await TestServer.with(configure: { $0.http.drainPeriodMs = 4000 }) { (a: TestServer) async throws -> NotifyLoad in
                let ws = try await WSTestClient.subscribed(port: a.port, token: Self.deviceToken, webhookID: "graceful-stop-hook")
                let balancer = Balancer(ports: [a.port, b.port])
                let probing = Task { await balancer.probe() }
                defer { probing.cancel() }
                let load = NotifyLoad(clients: 8, route: balancer.route)
                load.start()
                #expect(await load.waitForAnswers(200), "\(load.tally)")

                a.lifecycle.beginStop()
                #expect(a.lifecycle.phase == .draining)
                // During the drain: /ready says 503 ShuttingDown, and a notification on a new connection is served.
                let ready = try await a.request(.GET, "/ready")
                expectJSONError(ready, status: 503, errorType: "ShuttingDown")
                #expect(ready.headers["retry-after"] != nil)
                #expect(try await a.request(.GET, "/health").status == 200)
                let during = try await a.android(TestServer.haBody(token: "during-the-drain"))
                #expect(during.status == 201)
                #expect(during.headers["connection"] == "close")
                #expect(a.lifecycle.phase == .draining, "the drain outlasted the checks above")

                // The push channel is told to reconnect elsewhere once the drain is over.
                #expect(await ws.waitUntilClosed())
                #expect(ws.closeCode == WebSocketErrorCode(codeNumber: 1012), "\(String(describing: ws.closeCode))")
                try await eventually("the stopped instance's services stopped") { a.lifecycle.phase == .stopped }
                #expect(balancer.firstRefusal(of: a.port)?["errorType"]?.stringValue == "ShuttingDown")
                let logged = a.logs.lines.map(\.text)
                for step in ["stopping: /ready answers 503", "stopped accepting connections", "every connection closed", "database closed"] {
                    #expect(logged.contains { $0.hasPrefix(step) }, "no line starting \(step)")
                }
                return load
            }
            // The other instance takes the traffic.
            #expect(await load.waitForAnswers(100), "\(load.tally)")
            let tally = await load.stop()
            print("GracefulStopTests: \(tally)")
            #expect(tally.lost == 0, "\(tally)")
            #expect(tally.refused == 0, "\(tally)")
            #expect(tally.answered.keys.sorted() == [201], "\(tally)")
            #expect(tally.answeredBy[b.port, default: 0] > 0, "\(tally)")
        }
    }
}
