import Foundation
import HummingbirdWSClient
import Logging
import PushRelayCore

/// A websocket client for tests: connects to `/api/websocket`, buffers every text frame it receives, sends on demand.
final class WSTestClient: Sendable {
    private final class Buffer: Sendable {
        let received = Locked<[String]>([])
        let closed = Locked(false)
    }

    private let buffer = Buffer()
    private let outgoing: AsyncStream<String?>.Continuation
    private let task: Task<Void, Never>

    private init(port: Int) {
        let (stream, continuation) = AsyncStream.makeStream(of: String?.self)
        outgoing = continuation
        let buffer = self.buffer
        var logger = Logger(label: "ws-test-client")
        logger.logLevel = .critical
        task = Task {
            _ = try? await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/api/websocket", logger: logger) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await text in stream {
                            guard let text else {
                                try await outbound.close(.normalClosure, reason: nil)
                                return
                            }
                            try await outbound.write(.text(text))
                        }
                    }
                    for try await message in inbound.messages(maxSize: 1 << 22) {
                        if case .text(let t) = message { buffer.received.withLock { $0.append(t) } }
                    }
                    group.cancelAll()
                }
            }
            buffer.closed.withLock { $0 = true }
        }
    }

    static func connect(port: Int) -> WSTestClient { WSTestClient(port: port) }

    var isClosed: Bool { buffer.closed.withLock { $0 } }

    func send(_ value: JSONValue) { outgoing.yield(value.jsonString()) }
    func sendRaw(_ text: String) { outgoing.yield(text) }
    func close() { outgoing.yield(nil) }

    /// The next received frame as JSON; fails the test after `timeout`.
    func receive(timeout: Duration = .seconds(20), sourceLocation: SourceLocationHint = .init()) async throws -> JSONValue {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let text = buffer.received.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                return try JSONParser.parse(text)
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw WSTestError.timeout
    }

    /// Waits until the connection is closed by the server.
    func waitUntilClosed(timeout: Duration = .seconds(20)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if isClosed { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// Frames received and not yet consumed.
    var pendingFrames: [String] { buffer.received.withLock { $0 } }

    /// Connects, authenticates and subscribes; returns after the subscribe result.
    static func subscribed(
        port: Int,
        token: String,
        webhookID: String = "hook-1",
        id: Int64 = 1,
        supportConfirm: Bool = true,
        fallback: Bool? = nil
    ) async throws -> WSTestClient {
        let c = WSTestClient.connect(port: port)
        guard try await c.receive()["type"] == "auth_required" else { throw WSTestError.unexpected("no auth_required") }
        c.send(["type": "auth", "access_token": .string(token)])
        let auth = try await c.receive()
        guard auth["type"] == "auth_ok" else { throw WSTestError.unexpected("\(auth)") }
        var sub: JSONValue = [
            "id": .int(id), "type": "mobile_app/push_notification_channel", "webhook_id": .string(webhookID),
            "support_confirm": .bool(supportConfirm),
        ]
        if let fallback { sub["fallback"] = .bool(fallback) }
        c.send(sub)
        let result = try await c.receive()
        guard result["success"] == true else { throw WSTestError.unexpected("\(result)") }
        return c
    }

    deinit {
        outgoing.finish()
        task.cancel()
    }
}

struct SourceLocationHint {}

enum WSTestError: Error {
    case timeout
    case unexpected(String)
}
