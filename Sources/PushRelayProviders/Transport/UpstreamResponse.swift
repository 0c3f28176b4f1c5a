import NIOHTTP1
import PushRelayCore

/// A complete upstream answer: status, headers and (bounded) body.
struct UpstreamResponse: Sendable {
    /// Answers longer than this are cut; provider error bodies are a few hundred bytes.
    static let maxBodyBytes = 64 * 1024

    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    func header(_ name: String) -> String? { headers.first(name: name) }

    /// The body as JSON, or nil when it is empty or not JSON.
    var json: JSONValue? { body.isEmpty ? nil : try? JSONParser.parse(body) }
}
