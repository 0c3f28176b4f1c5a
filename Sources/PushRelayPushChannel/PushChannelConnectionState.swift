import PushRelayCore

/// The rules of one websocket connection's outbound side, without I/O, run under `PushChannelConnection`'s lock: a
/// queue bounded in frames and in bytes, at most one writer draining it, the close that follows once what is queued
/// went out, and whoever waits for room in the queue or for the connection to finish.
///
/// `Frame` is what is queued (a text and its failure handler in `PushChannelConnection`, a string in the tests);
/// `Waiter` is whatever the caller wakes (a continuation in `PushChannelConnection`, a number in the tests). Every
/// method returns what the caller must do; none of them writes, wakes or starts anything itself.
package struct PushChannelConnectionState<Frame, Waiter> {
    package typealias CloseReason = PushChannelConnection.CloseReason

    /// At most this many frames wait for the socket (`channel.outbound_buffer`).
    package let frameLimit: Int
    /// At most this many UTF-8 bytes wait for the socket, the frame being written included
    /// (`channel.outbound_buffer_bytes`); a frame alone always fits.
    package let byteLimit: Int

    /// Frames queued and not yet taken by the writer, with their sizes.
    private var queue = FIFOQueue<(frame: Frame, size: Int)>()
    /// UTF-8 bytes of the frames queued and of the one being written.
    package private(set) var bytes = 0
    /// The size of the frame being written (given back when its write ends).
    private var writingSize = 0
    /// A writer is running (it alone writes to the socket). Once the connection is closed it stays set: the writer
    /// that sends the close frame is the last one.
    package private(set) var writing = false
    package private(set) var isClosed = false
    /// Why the connection closed; set with `isClosed`.
    package private(set) var reason: CloseReason?
    /// A write failed: later frames fail without touching the socket.
    package private(set) var writeHasFailed = false
    /// Closed, drained and the close frame (if any) written.
    package private(set) var isFinished = false
    private var roomWaiters: [Waiter] = []
    private var finishWaiters: [Waiter] = []

    package init(frameLimit: Int, byteLimit: Int) {
        self.frameLimit = frameLimit
        self.byteLimit = byteLimit
    }

    /// Frames queued and not yet taken by the writer.
    package var queued: Int { queue.count }

    /// Whether a command may go ahead (see `roomAsked`): the connection is closed, or the queue is below half of both
    /// its bounds.
    package var hasRoom: Bool { isClosed || (queued < frameLimit / 2 && bytes < byteLimit / 2) }

    /// Whether a frame of `size` bytes fits: fewer than `frameLimit` frames queued, and `byteLimit` bytes with it
    /// unless nothing is queued or being written (a frame alone always fits).
    package func fits(size: Int) -> Bool { queued < frameLimit && (bytes == 0 || bytes + size <= byteLimit) }

    /// What to do with a frame offered (`frameOffered`).
    package enum OfferAction {
        /// The frame is queued. Start the writer if `startWriter` (none was running); wake `wake` (room waiters).
        case queued(startWriter: Bool, wake: [Waiter])
        /// The connection is closed: fail the frame.
        case refused
        /// The frame does not fit: fail it and close the socket soon (`PushChannelConnection.Sink.closeSoon`). The
        /// connection is closed with `.overflow`: what is queued still goes out, then the overflow's close frame.
        /// Start the writer if `startWriter`; wake `wake` (room waiters).
        case overflow(startWriter: Bool, wake: [Waiter])
    }

    /// A frame of `size` UTF-8 bytes is offered.
    package mutating func frameOffered(_ frame: Frame, size: Int) -> OfferAction {
        if isClosed { return .refused }
        if fits(size: size) {
            queue.append((frame, size))
            bytes += size
            return .queued(startWriter: claimWriter(), wake: roomWaitersToWake())
        }
        isClosed = true
        reason = .overflow
        return .overflow(startWriter: claimWriter(), wake: roomWaitersToWake())
    }

    /// What to do when a close is asked for (`closeRequested`).
    package enum CloseAction {
        /// The connection was closed already: nothing changes.
        case none
        /// The connection is now closed: what is queued goes out, then the close frame. Start the writer if
        /// `startWriter`; close the socket soon if `closeSoon`; wake `wake` (room waiters).
        case closed(startWriter: Bool, closeSoon: Bool, wake: [Waiter])
    }

    /// The connection is asked to close with `reason`. A connection turned away (failed or timed-out authentication,
    /// a binding replaced, an eviction) closes its socket soon, even if what is queued is never written.
    package mutating func closeRequested(_ reason: CloseReason) -> CloseAction {
        guard !isClosed else { return .none }
        isClosed = true
        self.reason = reason
        return .closed(startWriter: claimWriter(), closeSoon: Self.closesSoon(reason), wake: roomWaitersToWake())
    }

    /// Whether a connection closed for `reason` closes its socket after a grace period whatever is still queued.
    static func closesSoon(_ reason: CloseReason) -> Bool {
        switch reason {
        case .authFailed, .bindingReplaced, .evicted: true
        case .overflow, .writeFailed, .serverShutdown, .clientGone: false
        }
    }

    /// The writer's next step (`writerNext`); each one also says which room waiters to wake (`wake`).
    package enum WriterAction {
        /// Write the frame, then report `writeCompleted` or `writeFailed`.
        case write(Frame, wake: [Waiter])
        /// A write failed before: fail the frame without touching the socket.
        case fail(Frame, wake: [Waiter])
        /// The queue is empty and the connection closed: send the close frame for `closeFrame` (none when nil), then
        /// report `closeFrameSent`. The writer ends.
        case finish(closeFrame: CloseReason?, wake: [Waiter])
        /// The queue is empty and the connection open: the writer ends (the next frame queued starts another).
        case stop(wake: [Waiter])
    }

    /// The writer takes the next frame, one at a time, so the bounds count every frame not yet written.
    package mutating func writerNext() -> WriterAction {
        if let next = queue.popFirst() {
            let wake = roomWaitersToWake()
            if writeHasFailed {
                bytes -= next.size
                return .fail(next.frame, wake: wake)
            }
            writingSize = next.size
            return .write(next.frame, wake: wake)
        }
        if !isClosed { writing = false }
        let wake = roomWaitersToWake()
        guard isClosed, let reason else { return .stop(wake: wake) }
        return .finish(closeFrame: Self.sendsCloseFrame(reason) ? reason : nil, wake: wake)
    }

    /// Whether a connection closed for `reason` says goodbye with a close frame: not when the socket failed or the
    /// client went away.
    static func sendsCloseFrame(_ reason: CloseReason) -> Bool {
        switch reason {
        case .overflow, .serverShutdown, .authFailed, .bindingReplaced, .evicted: true
        case .writeFailed, .clientGone: false
        }
    }

    /// The frame being written went out: its bytes no longer count.
    package mutating func writeCompleted() {
        bytes -= writingSize
        writingSize = 0
    }

    /// The frame being written could not be: its bytes no longer count, and every later frame fails without touching
    /// the socket. The caller fails the frame, then closes the connection with `.writeFailed` (`closeRequested`).
    package mutating func writeFailed() {
        bytes -= writingSize
        writingSize = 0
        writeHasFailed = true
    }

    /// The writer sent the close frame (or had none to send): the connection is finished. Returns the finish waiters
    /// to wake.
    package mutating func closeFrameSent() -> [Waiter] {
        isFinished = true
        defer { finishWaiters = [] }
        return finishWaiters
    }

    /// Whether a waiter goes ahead now or waits to be woken.
    package enum WaitAction: Equatable {
        case goAhead
        case wait
    }

    /// A command asks for room in the queue: it goes ahead if there is room (`hasRoom`), else `waiter` is woken once
    /// there is (by a later action's `wake`).
    package mutating func roomAsked(by waiter: Waiter) -> WaitAction {
        if hasRoom { return .goAhead }
        roomWaiters.append(waiter)
        return .wait
    }

    /// Someone asks to know when the connection finished: it goes ahead if it has, else `waiter` is woken by
    /// `closeFrameSent`.
    package mutating func finishAsked(by waiter: Waiter) -> WaitAction {
        if isFinished { return .goAhead }
        finishWaiters.append(waiter)
        return .wait
    }

    /// Makes the caller the one to start the writer, unless one is running already.
    private mutating func claimWriter() -> Bool {
        if writing { return false }
        writing = true
        return true
    }

    /// The room waiters to wake now, if there is room.
    private mutating func roomWaitersToWake() -> [Waiter] {
        guard !roomWaiters.isEmpty, hasRoom else { return [] }
        defer { roomWaiters = [] }
        return roomWaiters
    }
}

extension PushChannelConnectionState.OfferAction: Equatable where Frame: Equatable, Waiter: Equatable {}
extension PushChannelConnectionState.CloseAction: Equatable where Frame: Equatable, Waiter: Equatable {}
extension PushChannelConnectionState.WriterAction: Equatable where Frame: Equatable, Waiter: Equatable {}
