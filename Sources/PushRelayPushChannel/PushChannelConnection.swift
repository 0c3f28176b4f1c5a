import Logging
import NIOCore
import NIOPosix
import NIOWebSocket
import PushRelayCore
import Synchronization

/// One websocket connection's outbound side: a queue bounded in frames and in bytes, drained by at most one writer task
/// at a time, so a slow reader never blocks whoever delivers to it. When the queue is full, or the socket fails, each
/// frame's failure handler runs (that is how unconfirmed-less messages fall back) and the connection closes with a reason.
///
/// The writer task exists only while there is something to write: it starts with the first queued frame and ends when
/// the queue is empty. An idle channel (almost all of them, almost always) holds no task and no task stack; a writer
/// task per connection cost about 5 KB each, 50 MB at 10,000 channels.
package final class PushChannelConnection: Sendable {
    /// Where frames go: the websocket's NIO channel (tests substitute their own).
    package struct Sink: Sendable {
        package let write: @Sendable (String) async throws -> Void
        /// Sends a close frame with a code and reason.
        package let close: @Sendable (WebSocketErrorCode, String) async -> Void
        /// Closes the socket after a short grace period whatever is still queued or being written: for a peer that
        /// stopped reading, whose pending write (and so the close frame behind it) would never complete.
        package let closeSoon: @Sendable () -> Void

        package init(
            write: @escaping @Sendable (String) async throws -> Void,
            close: @escaping @Sendable (WebSocketErrorCode, String) async -> Void,
            closeSoon: @escaping @Sendable () -> Void = {}
        ) {
            self.write = write
            self.close = close
            self.closeSoon = closeSoon
        }
    }

    package struct Frame: Sendable {
        package let text: String
        /// Runs if the frame could not be written (buffer full, socket gone).
        let onFailure: (@Sendable () -> Void)?
    }

    package enum CloseReason: Sendable, Equatable {
        case overflow
        case writeFailed
        case serverShutdown
        case authFailed
        case clientGone
        /// Home Assistant's notifications bound the push token or the webhook id to another pair.
        case bindingReplaced
        /// A provisional channel gave way to a paired device at the channel limits (`PushChannelAdmission`).
        case evicted
    }

    /// The queue's rules (`PushChannelConnectionState`), kept under the lock; this type runs what they return.
    private typealias State = PushChannelConnectionState<Frame, CheckedContinuation<Void, Never>>

    package let id: Int
    package let peer: String
    private let sink: Sink
    private let logger: Logger
    private let state: Locked<State>
    private static let counter = Atomic<Int>(0)
    private let authenticated = Atomic<Bool>(false)

    private let authTimer = Locked<ScheduledTimer?>(nil)

    /// Set once the client authenticated (the auth timeout checks it).
    var isAuthenticated: Bool { authenticated.load(ordering: .relaxed) }

    func markAuthenticated() {
        authenticated.store(true, ordering: .relaxed)
        cancelAuthTimer()
    }

    /// Closes the connection unless it authenticates within `timeout`.
    func startAuthTimer(after timeout: Duration, clock: any TimePort, onTimeout: @escaping @Sendable () -> Void) {
        let timer = clock.schedule(after: timeout, onTimeout)
        authTimer.withLock { $0 = timer }
    }

    /// Drops the timer as soon as it is not needed.
    func cancelAuthTimer() {
        authTimer.withLock { t in
            t?.cancel()
            t = nil
        }
    }

    /// `bufferLimit` frames and `byteLimit` bytes (`channel.outbound_buffer`, `channel.outbound_buffer_bytes`) may
    /// wait for the socket; past either the connection closes as a slow reader.
    package init(peer: String, bufferLimit: Int, byteLimit: Int = PushChannelSettings().outboundBufferBytes, sink: Sink, logger: Logger) {
        self.id = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        self.peer = peer
        self.state = Locked(State(frameLimit: bufferLimit, byteLimit: byteLimit))
        self.sink = sink
        self.logger = logger
    }

    package var isClosed: Bool { state.withLock { $0.isClosed } }
    package var closeReason: CloseReason? { state.withLock { $0.reason } }

    /// Queues a frame. Returns false (and runs `onFailure`) when the connection is closed or its buffer is full.
    @discardableResult
    package func send(_ text: String, onFailure: (@Sendable () -> Void)? = nil) -> Bool {
        let frame = Frame(text: text, onFailure: onFailure)
        switch state.withLock({ $0.frameOffered(frame, size: text.utf8.count) }) {
        case .queued(let startWriter, let waiters):
            for w in waiters { w.resume() }
            if startWriter { startWriterTask() }
            return true
        case .refused:
            onFailure?()
            return false
        case .overflow(let startWriter, let waiters):
            // The frames already queued still go out; the writer then closes with the reason.
            for w in waiters { w.resume() }
            if startWriter { startWriterTask() }
            sink.closeSoon()
            onFailure?()
            return false
        }
    }

    /// Closes the connection: what is queued goes out, then a close frame with the reason. A connection turned away
    /// (failed or timed-out authentication, a binding replaced, an eviction) closes its socket after the sink's grace
    /// period (`Sink.closeSoon`) even if those writes never complete: a peer that does not read cannot keep it.
    package func markClosed(_ reason: CloseReason) {
        guard case .closed(let startWriter, let closeSoon, let waiters) = state.withLock({ $0.closeRequested(reason) }) else { return }
        for w in waiters { w.resume() }
        if startWriter { startWriterTask() }
        if closeSoon { sink.closeSoon() }
    }

    /// Returns once the outbound queue is below half its bound, or the connection is closed. Command handling waits
    /// here before each command, so a client that sends commands faster than it reads the replies slows itself down
    /// (its socket stops being read) instead of overflowing the queue; only events can overflow it.
    func waitForRoom() async {
        // The usual case, without suspending (a suspension is a task switch per command).
        if state.withLock({ $0.hasRoom }) { return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            if state.withLock({ $0.roomAsked(by: c) }) == .goAhead { c.resume() }
        }
    }

    /// Returns once the connection is closed, every queued frame was written (or failed) and the close frame sent.
    package func finished() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            if state.withLock({ $0.finishAsked(by: c) }) == .goAhead { c.resume() }
        }
    }

    private func startWriterTask() {
        Task { await self.drain() }
    }

    /// The writer: writes queued frames until the queue is empty, then ends (closing the socket first if the
    /// connection was closed meanwhile).
    private func drain() async {
        while true {
            switch state.withLock({ $0.writerNext() }) {
            case .write(let frame, let waiters):
                for w in waiters { w.resume() }
                do {
                    try await sink.write(frame.text)
                    state.withLock { $0.writeCompleted() }
                } catch {
                    state.withLock { $0.writeFailed() }
                    frame.onFailure?()
                    markClosed(.writeFailed)
                }
            case .fail(let frame, let waiters):
                for w in waiters { w.resume() }
                frame.onFailure?()
            case .finish(let closeFrame, let waiters):
                for w in waiters { w.resume() }
                await finish(closeFrame: closeFrame)
                return
            case .stop(let waiters):
                for w in waiters { w.resume() }
                return
            }
        }
    }

    /// Says goodbye with the close frame for `reason` (none when nil) and wakes whoever waits in `finished()`.
    private func finish(closeFrame reason: CloseReason?) async {
        if let reason { await sendCloseFrame(reason) }
        for w in state.withLock({ $0.closeFrameSent() }) { w.resume() }
    }

    private func sendCloseFrame(_ reason: CloseReason) async {
        switch reason {
        case .overflow:
            logger.warning("closing a slow websocket reader: outbound buffer full", metadata: ["peer": .string(peer)])
            await sink.close(.policyViolation, "outbound buffer full; unconfirmed messages sent via the cloud")
        case .serverShutdown:
            await sink.close(.serviceRestart, "server restarting; reconnect")
        case .authFailed:
            await sink.close(.policyViolation, "authentication failed")
        case .bindingReplaced:
            await sink.close(.policyViolation, "Home Assistant moved this push token or webhook id to another pair")
        case .evicted:
            await sink.close(.policyViolation, "channel limit reached: a channel Home Assistant has not paired gave way to one it has")
        case .writeFailed, .clientGone:
            break  // no close frame (`PushChannelConnectionState.sendsCloseFrame`)
        }
    }
}
