import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// Why a request sent on an HTTP/2 connection got no answer.
enum UpstreamStreamFailure: Error, Equatable, Sendable {
    /// The connection closed (or failed) before the answer was complete. The request may have been processed.
    case connectionClosed
    /// The server said it did not process the request (`REFUSED_STREAM`, or an HTTP/1.1 connection that closed before
    /// it was written): it is safe to send again.
    case notProcessed
    /// The server sent GOAWAY with a last stream ID below this request's stream: it was sent and not processed, and
    /// the connection takes no more. Safe to send again on another connection, as often as connections rotate.
    case aboveGoAway
    /// The request never left this process: the connection stopped taking requests (GOAWAY, close) while the request
    /// still waited for a stream under the server's `SETTINGS_MAX_CONCURRENT_STREAMS`, or before it got to the
    /// connection. It goes to another connection as if it had not been tried; it is not a resend.
    case notSent
    /// The server reset the stream with this HTTP/2 error code.
    case reset(code: Int)
    /// The deadline passed before the answer was complete. The request may have been processed.
    case timedOut
    /// The connection went silent (no answer to a PING in time) and was closed. The request may have been processed.
    case connectionDead
}

/// The bookkeeping of one client HTTP/2 connection to a provider, without I/O: which stream carries which waiting
/// request, the answer gathered so far for each, which requests a GOAWAY, a reset or a closed connection fails, which
/// have passed their deadline, and how much inbound connection window to hand back.
///
/// `Waiter` is whatever the caller completes with the answer (a promise in `UpstreamHTTP2Handler`, a number in the
/// tests). Every method returns what the caller must do; none of them writes or completes anything itself.
struct UpstreamHTTP2StateMachine<Waiter> {
    typealias Failure = UpstreamStreamFailure

    /// What to do after an event about one stream.
    enum StreamAction {
        case none
        /// Complete the waiter with the answer.
        case succeed(Waiter, UpstreamResponse)
        /// Complete the waiter with the answer and reset the stream (its body was longer than kept).
        case succeedAndReset(Waiter, UpstreamResponse, HTTP2StreamID)
        case fail(Waiter, Failure)
        /// Fail the waiter and reset the stream, so that the server stops working on it.
        case failAndReset(Waiter, Failure, HTTP2StreamID)
    }

    /// What liveness asks for (`checkLiveness`).
    enum LivenessAction: Equatable {
        case none
        /// Send a PING: nothing has been heard for `pingAfter` while requests wait.
        case ping
        /// The PING went unanswered for `pingTimeout` and nothing else was heard: the connection is dead.
        case dead
    }

    /// Whether new requests may start on this connection.
    enum State: Equatable {
        case open
        /// GOAWAY received: streams up to this ID finish, no new one starts.
        case draining(lastStreamID: HTTP2StreamID)
        case closed
    }

    private struct Stream {
        var waiter: Waiter
        var deadline: ContinuousClock.Instant
        /// Its HEADERS frame has been written to the socket (until then it may wait in the HTTP/2 layer below for a
        /// stream under the server's cap).
        var sent = false
        var status: Int?
        var headers = HTTPHeaders()
        var body: [UInt8] = []
    }

    /// Answers longer than this are cut here and their stream reset (provider error bodies are a few hundred bytes).
    let maxBodyBytes: Int
    /// Inbound connection-window bytes handed back once this many have been read.
    let windowUpdateThreshold: Int

    private(set) var state = State.open
    private var streams: [HTTP2StreamID: Stream] = [:]
    private var nextStreamID = HTTP2StreamID(1)
    private var unacknowledgedBytes = 0
    /// When a frame last arrived from the server (or, with no request waiting, when the next one started).
    private var lastHeard: ContinuousClock.Instant?
    /// When the PING now waiting for its answer was sent, and how long it has waited by `checkLiveness`'s count.
    private var pingSentAt: ContinuousClock.Instant?
    private var pingWaited = Duration.zero
    /// When `checkLiveness` last ran.
    private var lastCheck: ContinuousClock.Instant?

    init(maxBodyBytes: Int = UpstreamResponse.maxBodyBytes, windowUpdateThreshold: Int = 32 * 1024) {
        self.maxBodyBytes = maxBodyBytes
        self.windowUpdateThreshold = windowUpdateThreshold
    }

    /// Requests waiting for an answer.
    var openStreams: Int { streams.count }

    /// Starts a request: the stream ID to send its HEADERS on, or the reason it cannot start here.
    mutating func start(_ waiter: Waiter, deadline: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Result<HTTP2StreamID, Failure> {
        guard case .open = state else { return .failure(.notSent) }
        guard deadline > now else { return .failure(.timedOut) }
        let id = nextStreamID
        nextStreamID = HTTP2StreamID(Int(id) + 2)
        // Silence counts only while requests wait: an idle connection is not judged.
        if streams.isEmpty { lastHeard = now }
        streams[id] = Stream(waiter: waiter, deadline: deadline)
        return .success(id)
    }

    /// A HEADERS frame: the answer's head (informational `1xx` heads are skipped), or its trailers.
    mutating func receivedHeaders(streamID: HTTP2StreamID, headers: HPACKHeaders, endStream: Bool) -> StreamAction {
        guard var stream = streams[streamID] else { return .none }
        if stream.status == nil {
            guard let status = headers.first(name: ":status").flatMap({ Int($0) }) else {
                streams[streamID] = nil
                return .failAndReset(stream.waiter, .reset(code: Int(HTTP2ErrorCode.protocolError.networkCode)), streamID)
            }
            if (100..<200).contains(status) {
                return .none
            }
            stream.status = status
            for (name, value, _) in headers where !name.hasPrefix(":") {
                stream.headers.add(name: name, value: value)
            }
        }
        guard endStream else {
            streams[streamID] = stream
            return .none
        }
        streams[streamID] = nil
        return finished(stream)
    }

    /// A DATA frame. Also returns how many connection-window bytes to hand back now (0: none yet).
    mutating func receivedData(streamID: HTTP2StreamID, bytes: ByteBuffer, endStream: Bool) -> (StreamAction, windowUpdate: Int) {
        unacknowledgedBytes += bytes.readableBytes
        var update = 0
        if unacknowledgedBytes >= windowUpdateThreshold {
            update = unacknowledgedBytes
            unacknowledgedBytes = 0
        }
        guard var stream = streams[streamID] else { return (.none, update) }
        let room = maxBodyBytes - stream.body.count
        stream.body += bytes.readableBytesView.prefix(room)
        if endStream {
            streams[streamID] = nil
            return (finished(stream), update)
        }
        if stream.body.count >= maxBodyBytes, stream.status != nil {
            // Longer than is kept: take what arrived and stop the server sending more.
            streams[streamID] = nil
            return (.succeedAndReset(stream.waiter, response(stream), streamID), update)
        }
        streams[streamID] = stream
        return (.none, update)
    }

    /// RST_STREAM from the server.
    mutating func receivedReset(streamID: HTTP2StreamID, code: HTTP2ErrorCode) -> StreamAction {
        guard let stream = streams.removeValue(forKey: streamID) else { return .none }
        if code == .refusedStream { return .fail(stream.waiter, .notProcessed) }
        return .fail(stream.waiter, .reset(code: Int(code.networkCode)))
    }

    /// The HTTP/2 layer below refused to send one of a request's frames (the stream's state forbade it; nothing was
    /// written). A refused HEADERS frame: the request never left, so it is `.notSent`. A refused DATA frame: the
    /// server has the head without the whole body, so the stream is reset.
    mutating func refusedWrite(streamID: HTTP2StreamID, headers: Bool) -> StreamAction {
        guard let stream = streams.removeValue(forKey: streamID) else { return .none }
        if headers { return .fail(stream.waiter, .notSent) }
        return .failAndReset(stream.waiter, .reset(code: Int(HTTP2ErrorCode.cancel.networkCode)), streamID)
    }

    /// The stream's HEADERS frame reached the socket.
    mutating func sent(streamID: HTTP2StreamID) {
        streams[streamID]?.sent = true
    }

    /// GOAWAY: streams above `lastStreamID` were not processed: those whose HEADERS went out fail with
    /// `.aboveGoAway`, those still held for a stream under the server's cap with `.notSent`. The others may finish.
    /// A later GOAWAY can only lower the last stream ID.
    mutating func receivedGoAway(lastStreamID: HTTP2StreamID) -> [(Waiter, Failure)] {
        if case .closed = state { return [] }
        if case .draining(let earlier) = state, earlier < lastStreamID {
            state = .draining(lastStreamID: earlier)
        } else {
            state = .draining(lastStreamID: lastStreamID)
        }
        var failed: [(Waiter, Failure)] = []
        for (id, stream) in streams where id > lastStreamID {
            streams[id] = nil
            failed.append((stream.waiter, stream.sent ? .aboveGoAway : .notSent))
        }
        return failed
    }

    /// Requests whose deadline is at or before `now`: each fails and its stream is reset.
    mutating func expire(now: ContinuousClock.Instant) -> [(Waiter, HTTP2StreamID)] {
        var expired: [(Waiter, HTTP2StreamID)] = []
        for (id, stream) in streams where stream.deadline <= now {
            streams[id] = nil
            expired.append((stream.waiter, id))
        }
        return expired
    }

    /// Any frame arrived from the server: the connection is alive.
    mutating func heard(now: ContinuousClock.Instant) {
        lastHeard = now
    }

    /// The liveness rule, asked on every deadline tick while requests wait: when nothing has been heard for
    /// `pingAfter`, send a PING; when it has gone unanswered (and nothing else has arrived) for `pingTimeout`, the
    /// connection is dead: a NAT or load balancer forgot it, or the server is gone without a word.
    ///
    /// The PING's wait is counted in the time between checks, each gap counted up to `maxCheckGap`: a check that comes
    /// seconds after the one before means this process was not running (its CPU was taken), and a server is not judged
    /// for the time its answer sat unread.
    mutating func checkLiveness(
        now: ContinuousClock.Instant,
        pingAfter: Duration,
        pingTimeout: Duration,
        maxCheckGap: Duration = .milliseconds(250)
    ) -> LivenessAction {
        let gap = lastCheck.map { min($0.duration(to: now), maxCheckGap) } ?? .zero
        lastCheck = now
        guard !streams.isEmpty, state != .closed else {
            pingSentAt = nil
            return .none
        }
        let lastHeard = self.lastHeard ?? now
        if let sent = pingSentAt {
            if lastHeard >= sent {
                pingSentAt = nil
            } else {
                pingWaited += gap
                return pingWaited >= pingTimeout ? .dead : .none
            }
        }
        guard lastHeard.duration(to: now) >= pingAfter else { return .none }
        pingSentAt = now
        pingWaited = .zero
        return .ping
    }

    /// The connection closed (`connectionClosed`) or was given up as dead (`connectionDead`): every request still
    /// waiting fails with `failure`.
    mutating func closed(_ failure: Failure = .connectionClosed) -> [(Waiter, Failure)] {
        state = .closed
        let failed = streams.values.map { ($0.waiter, failure) }
        streams = [:]
        return failed
    }

    /// The stream ID space is nearly spent: the caller should stop starting requests here (and open a new connection).
    var isExhausted: Bool { Int(nextStreamID) > Int(Int32.max) - 1_000 }

    private func finished(_ stream: Stream) -> StreamAction {
        guard stream.status != nil else {
            // END_STREAM without a status: not an answer.
            return .fail(stream.waiter, .reset(code: Int(HTTP2ErrorCode.protocolError.networkCode)))
        }
        return .succeed(stream.waiter, response(stream))
    }

    private func response(_ stream: Stream) -> UpstreamResponse {
        UpstreamResponse(status: stream.status ?? 0, headers: stream.headers, body: stream.body)
    }
}
