import Logging
import NIOCore
import NIOPosix
import NIOWebSocket
import PushRelayConfiguration
import PushRelayCore
import Synchronization

/// One websocket connection's outbound side: a queue bounded in frames and in bytes, drained by at most one writer task
/// at a time, so a slow reader never blocks whoever delivers to it. When the queue is full, or the socket fails, each
/// frame's failure handler runs (that is how unconfirmed-less messages fall back) and the connection closes with a reason.
///
/// The writer task exists only while there is something to write: it starts with the first queued frame and ends when
/// the queue is empty. An idle channel (almost all of them, almost always) holds no task and no task stack; a writer
/// task per connection cost about 5 KB each, 50 MB at 10,000 channels.
final class PushChannelConnection: Sendable {
    /// Where frames go: the websocket's NIO channel (tests substitute their own).
    struct Sink: Sendable {
        let write: @Sendable (String) async throws -> Void
        /// Sends a close frame with a code and reason.
        let close: @Sendable (WebSocketErrorCode, String) async -> Void
        /// Closes the socket after a short grace period whatever is still queued or being written: for a peer that
        /// stopped reading, whose pending write (and so the close frame behind it) would never complete.
        let closeSoon: @Sendable () -> Void

        init(
            write: @escaping @Sendable (String) async throws -> Void,
            close: @escaping @Sendable (WebSocketErrorCode, String) async -> Void,
            closeSoon: @escaping @Sendable () -> Void = {}
        ) {
            self.write = write
            self.close = close
            self.closeSoon = closeSoon
        }
    }

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
        /// Home Assistant's notifications bound the push token or the webhook id to another pair.
        case bindingReplaced
        /// A provisional channel gave way to a paired device at the channel limits (`PushChannelAdmission`).
        case evicted
    }

    private struct State {
        /// Frames queued and not yet taken by the writer.
        var queue = FIFOQueue<Frame>()
        var queued: Int { queue.count }
        /// UTF-8 bytes of the frames queued and of the one being written.
        var bytes = 0

        /// A writer task is running (it alone writes to the socket).
        var writing = false
        var closed = false
        var reason: CloseReason?
        /// A write failed: later frames fail without touching the socket.
        var writeFailed = false
        /// Closed, drained and the close frame (if any) written.
        var finished = false
        var finishWaiters: [CheckedContinuation<Void, Never>] = []
        /// Command handling waiting for the queue to go below half its bound (see `waitForRoom`).
        var roomWaiters: [CheckedContinuation<Void, Never>] = []

        /// Whether a command may go ahead (see `waitForRoom`): closed, or the queue below half of its bounds.
        func hasRoom(limit: Int, byteLimit: Int) -> Bool { closed || (queued < limit / 2 && bytes < byteLimit / 2) }

        /// Whether a frame of `size` bytes fits: fewer than `limit` frames queued, and `byteLimit` bytes with it unless
        /// nothing is queued or being written (a frame alone always fits).
        func fits(size: Int, limit: Int, byteLimit: Int) -> Bool { queued < limit && (bytes == 0 || bytes + size <= byteLimit) }

        /// The room waiters to wake now, if there is room.
        mutating func wakeRoomWaiters(limit: Int, byteLimit: Int) -> [CheckedContinuation<Void, Never>] {
            guard !roomWaiters.isEmpty, hasRoom(limit: limit, byteLimit: byteLimit) else { return [] }
            defer { roomWaiters = [] }
            return roomWaiters
        }

        mutating func take() -> Frame? { queue.popFirst() }

        /// Makes the caller the one to start the writer, unless one is running already.
        mutating func claimWriter() -> Bool {
            if writing { return false }
            writing = true
            return true
        }
    }

    let id: Int
    let peer: String
    private let bufferLimit: Int
    private let byteLimit: Int
    private let sink: Sink
    private let logger: Logger
    private let state = Locked(State())
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
    init(peer: String, bufferLimit: Int, byteLimit: Int = PushChannelSettings().outboundBufferBytes, sink: Sink, logger: Logger) {
        self.id = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        self.peer = peer
        self.bufferLimit = bufferLimit
        self.byteLimit = byteLimit
        self.sink = sink
        self.logger = logger
    }

    var isClosed: Bool { state.withLock { $0.closed } }
    var closeReason: CloseReason? { state.withLock { $0.reason } }

    /// Queues a frame. Returns false (and runs `onFailure`) when the connection is closed or its buffer is full.
    @discardableResult
    func send(_ text: String, onFailure: (@Sendable () -> Void)? = nil) -> Bool {
        enum Action { case queued, closed, overflow }
        let size = text.utf8.count
        let (action, startWriter, waiters) = state.withLock { s -> (Action, Bool, [CheckedContinuation<Void, Never>]) in
            if s.closed { return (.closed, false, []) }
            let action: Action
            if s.fits(size: size, limit: bufferLimit, byteLimit: byteLimit) {
                s.queue.append(Frame(text: text, onFailure: onFailure))
                s.bytes += size
                action = .queued
            } else {
                // The frames already queued still go out; the writer then closes with the reason.
                s.closed = true
                s.reason = .overflow
                action = .overflow
            }
            return (action, s.claimWriter(), s.wakeRoomWaiters(limit: bufferLimit, byteLimit: byteLimit))
        }
        for w in waiters { w.resume() }
        if startWriter { startWriterTask() }
        if case .overflow = action { sink.closeSoon() }
        guard case .queued = action else {
            onFailure?()
            return false
        }
        return true
    }

    /// Closes the connection: what is queued goes out, then a close frame with the reason. A connection turned away
    /// (failed or timed-out authentication, a binding replaced, an eviction) closes its socket after the sink's grace
    /// period (`Sink.closeSoon`) even if those writes never complete: a peer that does not read cannot keep it.
    func markClosed(_ reason: CloseReason) {
        let (closedNow, startWriter, waiters) = state.withLock { s -> (Bool, Bool, [CheckedContinuation<Void, Never>]) in
            guard !s.closed else { return (false, false, []) }
            s.closed = true
            s.reason = reason
            return (true, s.claimWriter(), s.wakeRoomWaiters(limit: bufferLimit, byteLimit: byteLimit))
        }
        for w in waiters { w.resume() }
        if startWriter { startWriterTask() }
        guard closedNow else { return }
        switch reason {
        case .authFailed, .bindingReplaced, .evicted: sink.closeSoon()
        case .overflow, .writeFailed, .serverShutdown, .clientGone: break
        }
    }

    /// Returns once the outbound queue is below half its bound, or the connection is closed. Command handling waits
    /// here before each command, so a client that sends commands faster than it reads the replies slows itself down
    /// (its socket stops being read) instead of overflowing the queue; only events can overflow it.
    func waitForRoom() async {
        // The usual case, without suspending (a suspension is a task switch per command).
        if state.withLock({ $0.hasRoom(limit: bufferLimit, byteLimit: byteLimit) }) { return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.hasRoom(limit: bufferLimit, byteLimit: byteLimit) { return true }
                s.roomWaiters.append(c)
                return false
            }
            if ready { c.resume() }
        }
    }

    /// Returns once the connection is closed, every queued frame was written (or failed) and the close frame sent.
    func finished() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let done = state.withLock { s -> Bool in
                if s.finished { return true }
                s.finishWaiters.append(c)
                return false
            }
            if done { c.resume() }
        }
    }

    private func startWriterTask() {
        Task { await self.drain() }
    }

    /// The writer: writes queued frames until the queue is empty, then ends (closing the socket first if the
    /// connection was closed meanwhile).
    private func drain() async {
        while true {
            // One frame at a time, so the queue's bound counts every frame not yet written.
            let (next, failed, closing, waiters) = state.withLock { s -> (Frame?, Bool, CloseReason?, [CheckedContinuation<Void, Never>]) in
                if let frame = s.take() { return (frame, s.writeFailed, nil, s.wakeRoomWaiters(limit: bufferLimit, byteLimit: byteLimit)) }
                if !s.closed { s.writing = false }
                return (nil, s.writeFailed, s.closed ? s.reason : nil, s.wakeRoomWaiters(limit: bufferLimit, byteLimit: byteLimit))
            }
            for w in waiters { w.resume() }
            guard let frame = next else {
                if let closing { await close(closing) }
                return
            }
            let size = frame.text.utf8.count
            if failed {
                state.withLock { $0.bytes -= size }
                frame.onFailure?()
                continue
            }
            do {
                try await sink.write(frame.text)
                state.withLock { $0.bytes -= size }
            } catch {
                state.withLock { s in
                    s.bytes -= size
                    s.writeFailed = true
                }
                frame.onFailure?()
                markClosed(.writeFailed)
            }
        }
    }

    /// Says goodbye with the close reason (if it calls for a close frame) and wakes whoever waits in `finished()`.
    private func close(_ reason: CloseReason) async {
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
            break
        }
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.finished = true
            defer { s.finishWaiters = [] }
            return s.finishWaiters
        }
        for w in waiters { w.resume() }
    }
}
