import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PushRelayCore
import PushRelayTestHarness
import PushRelayTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The provider front end on nghttp2 (`Tests/Interop/nghttp2_front_end.js`, run by Node): FCM HTTP v1 with its OAuth
/// token endpoint and APNs over TLS and HTTP/2, with the same knobs as `FakeFrontEnd`, each as nghttp2 does it. Its
/// server certificate is issued by the environment's test CA, so a provider's `ca_file` trusts it.
package final class NodeFrontEnd: Sendable {
    package let port: Int
    package let controlPort: Int
    private let pid: pid_t
    private let logFile: String

    package var endpoint: String { "https://127.0.0.1:\(port)" }
    package var tokenURI: String { endpoint + "/token" }
    package var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    private init(port: Int, controlPort: Int, pid: pid_t, logFile: String) {
        self.port = port
        self.controlPort = controlPort
        self.pid = pid
        self.logFile = logFile
    }

    /// Starts the front end with a certificate from `authority`, its files and log in `directory`.
    package static func start(authority: TestCertificateAuthority, directory: String) async throws -> NodeFrontEnd {
        let issued = try authority.issueServerCertificate()
        let cert = directory + "/nghttp2-cert.pem"
        let key = directory + "/nghttp2-key.pem"
        let logFile = directory + "/nghttp2-front-end.log"
        try issued.certificatePEM.write(toFile: cert, atomically: true, encoding: .utf8)
        try issued.privateKeyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        FileManager.default.createFile(atPath: logFile, contents: nil)
        let script = RepositoryRoot.url.appendingPathComponent("Tests/Interop/nghttp2_front_end.js").path
        let pid = try ProcessSpawn.start(["node", script, cert, key], environment: ProcessSpawn.environment(), stderrPath: logFile)
        let read = { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }
        for _ in 0..<400 {
            try await Task.sleep(for: .milliseconds(50))
            let text = read()
            if let range = text.range(of: "listening on "), let control = text.range(of: "control on ") {
                let port = Int(text[range.upperBound...].prefix { $0.isNumber })
                let controlPort = Int(text[control.upperBound...].prefix { $0.isNumber })
                if let port, let controlPort {
                    return NodeFrontEnd(port: port, controlPort: controlPort, pid: pid, logFile: logFile)
                }
            }
        }
        kill(pid, SIGKILL)
        _ = await ProcessSpawn.waitForExit(pid)
        throw ProcessSpawn.SpawnFailed(description: "the nghttp2 front end did not start: \(read())")
    }

    /// What the front end has seen.
    package struct State: Decodable {
        package struct Record: Decodable {
            package var path: String
            package var status: Int
            package var token: String?
        }
        package var records: [Record]
        package var goAways: Int
        package var refused: Int
        package var resetsAfterProcessing: Int
        package var ignored: Int
        package var connections: Int
        package var tokenRequests: Int
    }

    package func state() async throws -> State {
        let body = try await control(.GET, "/state", nil)
        return try JSONDecoder().decode(State.self, from: Data(body.utf8))
    }

    /// Merges `knobs` into the front end's knobs (`JSONValue.null` turns one off).
    package func set(_ knobs: [String: JSONValue]) async throws {
        _ = try await control(.POST, "/knobs", .object(knobs))
    }

    /// Sends `SETTINGS_MAX_CONCURRENT_STREAMS = value` on every open connection, and uses it for new ones.
    package func changeMaxConcurrentStreams(to value: Int) async throws {
        _ = try await control(.POST, "/settings", .object(["maxConcurrentStreams": .int(Int64(value))]))
    }

    /// Every access token issued so far is refused from now on.
    package func revokeAccessTokens() async throws {
        _ = try await control(.POST, "/revoke", nil)
    }

    package func shutdown() async {
        kill(pid, SIGTERM)
        _ = await ProcessSpawn.waitForExit(pid)
    }

    private func control(_ method: HTTPMethod, _ path: String, _ body: JSONValue?) async throws -> String {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(controlPort)\(path)")
        request.method = method
        if let body { request.body = .bytes(ByteBuffer(string: body.jsonString())) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        return String(buffer: try await response.body.collect(upTo: 64 * 1024 * 1024))
    }
}
