import NIOCore
import NIOHTTP2
import PushRelayCore

/// What Google's and Apple's front ends do to HTTP/2 connections that a plain fake does not, as knobs on a fake's
/// HTTP/2 connections: a small and changing `SETTINGS_MAX_CONCURRENT_STREAMS`, a graceful GOAWAY every so many
/// streams (the connection then closes a while later), `REFUSED_STREAM` before processing, and a reset after
/// processing. Every knob is off until set. Thread-safe.
///
/// A request the front end does not let through (refused, or on a stream above a GOAWAY's last stream id) never
/// reaches the fake's handler, so it is not recorded: the fake's records are exactly what was processed.
public final class FakeFrontEnd: Sendable {
    /// What happens to one request on an HTTP/2 stream.
    enum Admission: Equatable {
        /// Processed and answered.
        case process
        /// Processed and answered, then GOAWAY with this stream as the last one; the connection closes later.
        case processThenGoAway
        /// `REFUSED_STREAM` before processing.
        case refuse
        /// Processed (recorded), then the stream is reset without an answer.
        case resetAfterProcessing
        /// The connection sent GOAWAY with a lower last stream id: not processed.
        case ignore
    }

    public struct Knobs: Sendable {
        /// After this many requests on one connection, the last one's answer is followed by a graceful GOAWAY.
        public var goAwayEvery: Int?
        /// At most this many connections get the GOAWAY of `goAwayEvery` (counted across connections); nil: every one.
        public var goAwayLimit: Int?
        /// How long after its GOAWAY the front end closes the connection.
        public var goAwayCloseAfter: TimeAmount = .seconds(1)
        /// The GOAWAY's error code and debug data (APNs sends a JSON reason, `{"reason":"Shutdown"}`); nil: `NO_ERROR`.
        public var goAwayError: (code: HTTP2ErrorCode, debugData: String)?
        /// Every so many requests (across connections) are refused with `REFUSED_STREAM`.
        public var refuseEvery: Int?
        /// Every so many requests (across connections) are processed and then reset (`INTERNAL_ERROR`) unanswered.
        public var resetAfterProcessingEvery: Int?
        /// `SETTINGS_MAX_CONCURRENT_STREAMS` of new connections; nil: NIO's default (100).
        public var maxConcurrentStreams: Int?

        public init() {}
    }

    private struct ConnectionState {
        var requests = 0
        /// The highest stream id let through on this connection: a GOAWAY names it, as every stream up to it may
        /// have been processed (streams complete out of order).
        var highestStreamID = 0
        var goAwayLastStreamID: Int?
    }

    private struct State {
        var knobs = Knobs()
        var connections: [Int: ConnectionState] = [:]
        var parents: [Int: any Channel] = [:]
        var requests = 0
        var goAways = 0
        var refused = 0
        var resetAfterProcessing = 0
    }

    private let state = Locked(State())

    public init() {}

    /// Sets the knobs for what comes next.
    public func set(_ change: (inout Knobs) -> Void) {
        state.withLock { change(&$0.knobs) }
    }

    public var knobs: Knobs { state.withLock { $0.knobs } }

    /// GOAWAY frames sent, requests refused, requests reset after processing.
    public var goAwaysSent: Int { state.withLock { $0.goAways } }
    public var refusedStreams: Int { state.withLock { $0.refused } }
    public var resetsAfterProcessing: Int { state.withLock { $0.resetAfterProcessing } }

    /// Sends `SETTINGS_MAX_CONCURRENT_STREAMS = value` on every open connection, and uses it for new ones.
    public func changeMaxConcurrentStreams(to value: Int) {
        let parents = state.withLock { s -> [any Channel] in
            s.knobs.maxConcurrentStreams = value
            return Array(s.parents.values)
        }
        let frame = HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: value)])))
        for parent in parents { parent.writeAndFlush(frame, promise: nil) }
    }

    /// The settings a new connection starts with.
    var initialSettings: HTTP2Settings {
        var settings = nioDefaultSettings
        if let max = knobs.maxConcurrentStreams {
            settings.removeAll { $0.parameter == .maxConcurrentStreams }
            settings.append(HTTP2Setting(parameter: .maxConcurrentStreams, value: max))
        }
        return settings
    }

    func opened(connectionID: Int, parent: any Channel) {
        state.withLock { $0.parents[connectionID] = parent }
        parent.closeFuture.whenComplete { [state] _ in
            state.withLock {
                $0.parents[connectionID] = nil
                $0.connections[connectionID] = nil
            }
        }
    }

    /// What to do with a complete request on `streamID` of connection `connectionID`, and for
    /// `processThenGoAway` the GOAWAY's last stream id.
    func admit(connectionID: Int, streamID: Int) -> (Admission, lastStreamID: Int) {
        state.withLock { s in
            var connection = s.connections[connectionID, default: ConnectionState()]
            defer { s.connections[connectionID] = connection }
            if let last = connection.goAwayLastStreamID, streamID > last { return (.ignore, last) }
            s.requests += 1
            if let every = s.knobs.refuseEvery, s.requests % every == 0 {
                s.refused += 1
                return (.refuse, 0)
            }
            connection.requests += 1
            connection.highestStreamID = max(connection.highestStreamID, streamID)
            if let every = s.knobs.resetAfterProcessingEvery, s.requests % every == 0 {
                s.resetAfterProcessing += 1
                return (.resetAfterProcessing, 0)
            }
            if connection.goAwayLastStreamID == nil, let every = s.knobs.goAwayEvery, connection.requests >= every,
                s.knobs.goAwayLimit.map({ s.goAways < $0 }) ?? true
            {
                connection.goAwayLastStreamID = connection.highestStreamID
                s.goAways += 1
                return (.processThenGoAway, connection.highestStreamID)
            }
            return (.process, 0)
        }
    }
}
