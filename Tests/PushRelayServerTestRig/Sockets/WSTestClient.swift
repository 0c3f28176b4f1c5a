import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOWebSocket
import PushRelayCore

/// A websocket client for tests: connects to `/api/websocket`, buffers every text frame it receives, sends on demand.
package final class WSTestClient: Sendable {
    private let buffer = Inbox()
    private let outgoing: AsyncStream<String?>.Continuation
    private let task: Task<Void, Never>

    private init(port: Int, headers: [(String, String)]) {
        let (stream, continuation) = AsyncStream.makeStream(of: String?.self)
        outgoing = continuation
        let buffer = self.buffer
        var logger = Logger(label: "ws-test-client")
        logger.logLevel = .critical
        var configuration = WebSocketClientConfiguration()
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { configuration.additionalHeaders.append(HTTPField(name: name, value: value)) }
        }
        task = Task { [configuration] in
            let closing = try? await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/api/websocket",
                configuration: configuration,
                logger: logger
            ) {
                inbound,
                outbound,
                _ in
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
                        if case .text(let t) = message { buffer.received(t) }
                    }
                    group.cancelAll()
                }
            }
            buffer.close(code: closing?.closeCode)
        }
    }

    /// Connects; `headers` go with the upgrade request (`X-Forwarded-For` to a server that trusts 127.0.0.1, say).
    package static func connect(port: Int, headers: [(String, String)] = []) -> WSTestClient { WSTestClient(port: port, headers: headers) }

    package var isClosed: Bool { buffer.isClosed }
    /// The code of the server's close frame, once closed (nil: no close frame).
    package var closeCode: WebSocketErrorCode? { buffer.closeCode }

    package func send(_ value: JSONValue) { outgoing.yield(value.jsonString()) }
    package func sendRaw(_ text: String) { outgoing.yield(text) }
    package func close() { outgoing.yield(nil) }

    /// The next received frame as JSON, as soon as it arrives; fails the test after `timeout`, or at once when the
    /// connection closed with no frame left.
    package func receive(timeout: Duration = .seconds(20), sourceLocation: SourceLocationHint = .init()) async throws -> JSONValue {
        let buffer = self.buffer
        let text = try await Self.within(timeout) { try await buffer.next() }
        guard let text else { throw WSTestError.closed }
        return try JSONParser.parse(text)
    }

    /// Waits until the connection is closed by the server; false when it is still open after `timeout`.
    package func waitUntilClosed(timeout: Duration = .seconds(20)) async -> Bool {
        let buffer = self.buffer
        return (try? await Self.within(timeout) { try await buffer.closed() }) != nil
    }

    /// Frames received and not yet consumed.
    package var pendingFrames: [String] { buffer.pending }

    /// `body`'s result, or `WSTestError.timeout` once `timeout` has passed (`body` is cancelled then).
    private static func within<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw WSTestError.timeout
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// Connects, authenticates and subscribes; returns after the subscribe result.
    package static func subscribed(
        port: Int,
        token: String,
        webhookID: String = "hook-1",
        id: Int64 = 1,
        supportConfirm: Bool = true,
        fallback: Bool? = nil,
        headers: [(String, String)] = []
    ) async throws -> WSTestClient {
        let c = WSTestClient.connect(port: port, headers: headers)
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

package struct SourceLocationHint {}

package enum WSTestError: Error {
    case timeout
    /// The connection closed with no frame left to receive.
    case closed
    case unexpected(String)
}

/// What a `WSTestClient` received: frames in order, and whether the connection has closed. Whoever waits for the next
/// frame or the close is resumed by the event itself.
private final class Inbox: Sendable {
    private struct State {
        var frames: [String] = []
        var isClosed = false
        var closeCode: WebSocketErrorCode?
        var nextID = 0
        /// Waiting for a frame (nil: the connection closed), first come first served.
        var frameWaiters: [(id: Int, continuation: CheckedContinuation<String?, any Error>)] = []
        var closeWaiters: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    private let state = Locked(State())

    var isClosed: Bool { state.withLock { $0.isClosed } }
    var closeCode: WebSocketErrorCode? { state.withLock { $0.closeCode } }
    var pending: [String] { state.withLock { $0.frames } }

    func received(_ text: String) {
        let waiter = state.withLock { s -> CheckedContinuation<String?, any Error>? in
            guard !s.frameWaiters.isEmpty else {
                s.frames.append(text)
                return nil
            }
            return s.frameWaiters.removeFirst().continuation
        }
        waiter?.resume(returning: text)
    }

    func close(code: WebSocketErrorCode? = nil) {
        let (frameWaiters, closeWaiters) = state.withLock { s in
            s.isClosed = true
            s.closeCode = code
            defer {
                s.frameWaiters = []
                s.closeWaiters = []
            }
            return (s.frameWaiters, s.closeWaiters)
        }
        for w in frameWaiters { w.continuation.resume(returning: nil) }
        for w in closeWaiters { w.continuation.resume() }
    }

    /// The next frame, once there is one; nil when the connection closed with none left. Throws when cancelled.
    func next() async throws -> String? {
        try await wait(
            ready: { (s: inout State) -> String?? in
                if !s.frames.isEmpty { return .some(s.frames.removeFirst()) }
                return s.isClosed ? .some(nil) : nil
            },
            waiters: \.frameWaiters
        )
    }

    /// Returns once the connection is closed. Throws when cancelled.
    func closed() async throws {
        try await wait(ready: { (s: inout State) -> Void? in s.isClosed ? () : nil }, waiters: \.closeWaiters)
    }

    /// `ready`'s value at once, or a wait in `waiters` until the event resumes it (or the task is cancelled).
    private func wait<T: Sendable>(
        ready: @escaping @Sendable (inout State) -> T?,
        waiters: WritableKeyPath<State, [(id: Int, continuation: CheckedContinuation<T, any Error>)]> & Sendable
    ) async throws -> T {
        let id = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
                let now = state.withLock { s -> Result<T, any Error>? in
                    if let value = ready(&s) { return .success(value) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    s[keyPath: waiters].append((id, c))
                    return nil
                }
                if let now { c.resume(with: now) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<T, any Error>? in
                guard let i = s[keyPath: waiters].firstIndex(where: { $0.id == id }) else { return nil }
                return s[keyPath: waiters].remove(at: i).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
