import Logging
import NIOWebSocket
import Synchronization
import WSCore

/// One websocket connection's outbound side: a bounded queue drained by a single writer task, so a slow reader
/// never blocks whoever delivers to it. When the queue is full, or the socket fails, each frame's failure handler runs
/// (that is how unconfirmed-less messages fall back) and the connection closes with a reason.
final class ChannelConnection: Sendable {
    struct Frame: Sendable {
        let text: String
        /// Runs if the frame could not be written (buffer full, socket gone).
        let onFailure: (@Sendable () -> Void)?
    }

    enum CloseReason: Sendable, Equatable {
        case overflow
        case writeFailed
        case serverShutdown
        case authFailed
        case clientGone
    }

    let id: Int
    let peer: String
    private let stream: AsyncStream<Frame>
    private let continuation: AsyncStream<Frame>.Continuation
    private let state = Mutex<(closed: Bool, reason: CloseReason?)>((false, nil))
    private static let counter = Atomic<Int>(0)
    private let authenticated = Atomic<Bool>(false)

    private let authTimer = Mutex<Task<Void, Never>?>(nil)

    /// Set once the client authenticated (the auth timeout checks it).
    var isAuthenticated: Bool { authenticated.load(ordering: .relaxed) }

    func markAuthenticated() {
        authenticated.store(true, ordering: .relaxed)
        cancelAuthTimer()
    }

    /// Closes the connection unless it authenticates within `timeout`.
    func startAuthTimer(_ timeout: Duration, onTimeout: @escaping @Sendable () -> Void) {
        let task = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            onTimeout()
        }
        authTimer.withLock { $0 = task }
    }

    /// Frees the timer as soon as it is not needed (10,000 sleeping timers would otherwise hold memory for 10 s).
    func cancelAuthTimer() {
        authTimer.withLock { t in
            t?.cancel()
            t = nil
        }
    }

    init(peer: String, bufferLimit: Int) {
        self.id = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        self.peer = peer
        (stream, continuation) = AsyncStream.makeStream(of: Frame.self, bufferingPolicy: .bufferingOldest(bufferLimit))
    }

    var isClosed: Bool { state.withLock { $0.closed } }
    var closeReason: CloseReason? { state.withLock { $0.reason } }

    /// Queues a frame. Returns false (and runs `onFailure`) when the connection is closed or its buffer is full.
    @discardableResult
    func send(_ text: String, onFailure: (@Sendable () -> Void)? = nil) -> Bool {
        if isClosed {
            onFailure?()
            return false
        }
        switch continuation.yield(Frame(text: text, onFailure: onFailure)) {
        case .enqueued:
            return true
        case .dropped:
            onFailure?()
            markClosed(.overflow)
            return false
        case .terminated:
            onFailure?()
            return false
        @unknown default:
            onFailure?()
            return false
        }
    }

    func markClosed(_ reason: CloseReason) {
        let first = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            s = (true, reason)
            return true
        }
        if first { continuation.finish() }
    }

    /// Writes queued frames until the connection closes. Frames left over when it does get their failure handlers run.
    func runWriter(_ outbound: WebSocketOutboundWriter, logger: Logger) async {
        var failed = false
        for await frame in stream {
            if failed {
                frame.onFailure?()
                continue
            }
            do {
                try await outbound.write(.text(frame.text))
            } catch {
                failed = true
                frame.onFailure?()
                markClosed(.writeFailed)
            }
        }
        switch closeReason {
        case .overflow?:
            logger.warning("closing a slow websocket reader: outbound buffer full", metadata: ["peer": .string(peer)])
            try? await outbound.close(.policyViolation, reason: "outbound buffer full; unconfirmed messages sent via the cloud")
        case .serverShutdown?:
            try? await outbound.close(.goingAway, reason: "server shutting down")
        case .authFailed?:
            try? await outbound.close(.policyViolation, reason: "authentication failed")
        default:
            break
        }
    }
}
