import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import PushRelayCore

/// A complete upstream answer: status, headers and (bounded) body.
struct UpstreamResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    func header(_ name: String) -> String? { headers.first(name: name) }

    /// The body as JSON, or nil when it is empty or not JSON.
    var json: JSONValue? { body.isEmpty ? nil : try? JSONParser.parse(body) }
}

/// One HTTP exchange with a provider. Anything that is not an HTTP answer (refused connection, reset, TLS failure,
/// timeout) becomes `DeliveryFailure.transient`, so callers only ever see typed outcomes.
enum UpstreamExchange {
    /// Answers larger than this are truncated; provider error bodies are a few hundred bytes.
    static let maxBodyBytes = 64 * 1024

    static func perform(
        _ request: HTTPClientRequest,
        on client: HTTPClient,
        origin: UpstreamOrigin,
        timeout: TimeAmount,
        providerName: String
    ) async throws(DeliveryFailure) -> UpstreamResponse {
        do {
            let response = try await client.execute(request, timeout: timeout)
            var body: [UInt8] = []
            do {
                for try await chunk in response.body {
                    let room = maxBodyBytes - body.count
                    if room <= 0 { break }
                    body += chunk.readableBytesView.prefix(room)
                }
            } catch {
                // The head arrived but the body was cut: the status still tells what happened.
            }
            return UpstreamResponse(status: Int(response.status.code), headers: response.headers, body: body)
        } catch {
            throw transientFailure(for: error, providerName: providerName, origin: origin)
        }
    }

    static func transientFailure(for error: any Error, providerName: String, origin: UpstreamOrigin) -> DeliveryFailure {
        // Never the path: APNs paths carry device tokens.
        let target = origin.description
        if let e = error as? HTTPClientError {
            switch e {
            case .readTimeout, .deadlineExceeded, .connectTimeout, .tlsHandshakeTimeout, .writeTimeout, .getConnectionFromPoolTimeout:
                return .transient(
                    reason: "Timeout",
                    message: "\(providerName): no answer from \(target) in time (\(e.shortDescription))",
                    retryAfterSeconds: nil
                )
            case .cancelled where Task.isCancelled:
                return .transient(reason: "Cancelled", message: "\(providerName): the request to \(target) was cancelled", retryAfterSeconds: nil)
            case .cancelled:
                // Not our task: the connection the request was queued on went away.
                return .transient(
                    reason: "ConnectionError",
                    message: "\(providerName): the connection to \(target) closed before the request was sent",
                    retryAfterSeconds: nil
                )
            default:
                break
            }
        }
        if error is CancellationError {
            return .transient(reason: "Cancelled", message: "\(providerName): the request to \(target) was cancelled", retryAfterSeconds: nil)
        }
        return .transient(
            reason: "ConnectionError",
            message: "\(providerName): cannot reach \(target): \(String(describing: error))",
            retryAfterSeconds: nil
        )
    }
}
