import PushRelayCore
import Synchronization

/// A fake's running `FakeTLSServer`, once started: its bound port, connection count and shutdown. Shared by the
/// fake APNs, FCM and WebPush services so each only says how it answers.
final class FakeServerSlot: Sendable {
    private let server: Locked<FakeTLSServer?> = Locked(nil)
    private let boundPort = Atomic<Int>(0)

    /// Starts `server` on `127.0.0.1:port` (0 picks a free port) and keeps it.
    func start(_ server: FakeTLSServer, port: Int) async throws {
        let bound = try await server.start(host: "127.0.0.1", port: port)
        self.server.withLock { $0 = server }
        boundPort.store(bound, ordering: .relaxed)
    }

    /// The bound port (after `start`).
    var port: Int { boundPort.load(ordering: .relaxed) }

    /// How many TCP connections clients opened.
    var acceptedConnections: Int { server.withLock { $0?.acceptedConnections ?? 0 } }

    func shutdown() async {
        let running = server.withLock { s -> FakeTLSServer? in
            defer { s = nil }
            return s
        }
        await running?.shutdown()
    }
}
