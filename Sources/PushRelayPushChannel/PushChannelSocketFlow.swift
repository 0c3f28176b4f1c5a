import NIOCore

/// What one websocket does about its control frames and its reads while the peer is not reading: a state machine
/// without I/O, run on the channel's event loop by `PushChannelSocketFlowHandler`.
///
/// While the channel is not writable (its write buffer is past the high water mark: the peer stopped reading what it
/// was sent), the socket is not read either, so what the peer sends waits in its own TCP window. A ping read meanwhile
/// is answered once the channel is writable again, and only the latest one (RFC 6455 §5.5.3 allows answering just the
/// most recent ping): at most one pong waits. A keepalive ping that falls due meanwhile waits the same way.
///
/// The keepalive: each round sends a ping with a payload of its own; only a pong that carries it answers, so a peer
/// that reads nothing cannot keep itself alive by sending frames. A round that finds the previous ping unanswered
/// closes the connection.
package struct PushChannelSocketFlow {
    /// Whether the channel takes more writes now (its `isWritable`).
    package private(set) var writable: Bool
    /// The pipeline asked for a read while the channel was not writable: it is passed on once the channel is writable.
    package private(set) var readHeld = false
    /// The latest ping's payload, to answer once the channel is writable.
    package private(set) var pendingPong: ByteBuffer?
    /// A keepalive ping that fell due while the channel was not writable, to send once it is.
    package private(set) var pendingPing: ByteBuffer?
    /// The payload of the keepalive ping not answered yet; nil when none is outstanding.
    package private(set) var awaitedPong: ByteBuffer?

    package init(writable: Bool = true) {
        self.writable = writable
    }

    package enum ReadAction: Equatable {
        /// Pass the read on: the socket is read.
        case read
        /// Hold it until the channel is writable again.
        case hold
    }

    /// The pipeline asks for a read (`autoRead`, or the session resuming).
    package mutating func readRequested() -> ReadAction {
        guard writable else {
            readHeld = true
            return .hold
        }
        return .read
    }

    /// A ping arrived with `payload`: the pong to write now, if any (nil: it waits, replacing any pong that waited).
    package mutating func pingReceived(_ payload: ByteBuffer) -> ByteBuffer? {
        guard writable else {
            pendingPong = payload
            return nil
        }
        pendingPong = nil
        return payload
    }

    /// A pong arrived: it answers the keepalive ping if it carries that ping's payload. Other pongs (unsolicited ones,
    /// RFC 6455 §5.5.3) change nothing.
    package mutating func pongReceived(_ payload: ByteBuffer) {
        if let awaitedPong, awaitedPong == payload { self.awaitedPong = nil }
    }

    package enum KeepaliveAction: Equatable {
        /// The previous ping went unanswered: close the connection.
        case close
        /// Send a ping with this payload.
        case ping(ByteBuffer)
        /// The ping waits until the channel is writable (it counts as sent: the next round closes unless answered).
        case wait
    }

    /// A keepalive round is due; `payload` is the new ping's (unique to the round).
    package mutating func keepaliveDue(payload: ByteBuffer) -> KeepaliveAction {
        if awaitedPong != nil { return .close }
        awaitedPong = payload
        guard writable else {
            pendingPing = payload
            return .wait
        }
        return .ping(payload)
    }

    /// What to do when the channel's writability changed.
    package struct Resumption: Equatable {
        /// The pong that waited, to write now.
        package var pong: ByteBuffer?
        /// The keepalive ping that waited, to write now.
        package var ping: ByteBuffer?
        /// Pass on the read that was held.
        package var read: Bool

        package init(pong: ByteBuffer?, ping: ByteBuffer?, read: Bool) {
            self.pong = pong
            self.ping = ping
            self.read = read
        }

        package static let none = Resumption(pong: nil, ping: nil, read: false)
    }

    /// The channel became writable (`true`) or stopped being writable.
    package mutating func writabilityChanged(to isWritable: Bool) -> Resumption {
        writable = isWritable
        guard isWritable else { return .none }
        defer {
            pendingPong = nil
            pendingPing = nil
            readHeld = false
        }
        return Resumption(pong: pendingPong, ping: pendingPing, read: readHeld)
    }
}
