import NIOCore
import PushRelayCore

/// One request as a fake server received it.
public struct FakeRequest: Sendable {
    /// Which TCP connection carried it (1, 2, … in accept order): per-connection rules key on this.
    public var connectionID: Int
    public var method: String
    /// `:path` (HTTP/2) or the request target (HTTP/1.1).
    public var path: String
    /// Header fields in arrival order, names lower-cased; pseudo-headers are not included.
    public var headerFields: [(name: String, value: String)]
    public var body: [UInt8]

    /// The last value of a header (names are case-insensitive).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headerFields.last { $0.name == lower }?.value
    }

    /// How many times a header occurs.
    public func count(of name: String) -> Int {
        let lower = name.lowercased()
        return headerFields.filter { $0.name == lower }.count
    }

    /// The headers as a dictionary (last value wins).
    public var headers: [String: String] {
        var d: [String: String] = [:]
        for (n, v) in headerFields { d[n] = v }
        return d
    }

    /// The body parsed as JSON, or nil when it is not JSON.
    public var json: JSONValue? { try? JSONParser.parse(body) }
}

/// What a fake answers.
public struct FakeResponse: Sendable {
    public enum Action: Sendable {
        case respond
        /// Close the whole TCP connection without answering.
        case dropConnection
        /// Reset the request's HTTP/2 stream (`RST_STREAM`) without answering; the connection stays.
        case resetStream
        /// Send GOAWAY saying no stream was processed, then close the connection (as a server going down does).
        case goAway
    }

    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// Wait this long before answering (or dropping).
    public var delay: TimeAmount?
    public var action: Action

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = [], delay: TimeAmount? = nil, action: Action = .respond) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
        self.action = action
    }

    public static func json(_ status: Int, _ value: JSONValue, headers: [(String, String)] = []) -> FakeResponse {
        FakeResponse(status: status, headers: [("content-type", "application/json")] + headers, body: JSONWriter.bytes(value))
    }
}
