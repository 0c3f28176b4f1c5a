import AsyncHTTPClient
import Foundation
import NIOCore
import PushRelayCore
import PushRelayServerTestRig
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real `pushrelay serve` with `log.format: json`: everything it writes to standard error is one JSON object a
/// line, and the lines written while serving a request carry the id the request came with.
@Suite struct JSONLogFormatProcessTests {
    @Test func theBinaryLogsJSONLinesWithRequestIDs() async throws {
        let dir = URL(fileURLWithPath: TestServer.tempPath()).deletingLastPathComponent().path
        let config = dir + "/pushrelay.yaml"
        try """
        http:
          port: 0
        storage:
          sqlite_path: \(dir)/pushrelay.sqlite
        quota:
          daily_limit: 1
        log:
          level: debug
          format: json
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let server = try await ServerProcess.start(config: config, logFile: dir + "/serve.log")
        var statuses: [Int] = []
        do {
            for id in ["ha-1", "ha-2"] {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/api/sendPush/android/v1")
                request.method = .POST
                request.headers.add(name: "X-Request-Id", value: id)
                request.body = .bytes(ByteBuffer(string: TestServer.haBody(token: "json-log-token").jsonString()))
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                _ = try await response.body.collect(upTo: 1 << 20)
                statuses.append(Int(response.status.code))
                #expect(response.headers.first(name: "X-Request-Id") == id)
            }
        } catch {
            await server.stop(SIGKILL)
            throw error
        }
        #expect(await server.stop(SIGTERM) == 0)
        #expect(statuses == [201, 429])

        let lines = server.log.split(separator: "\n").map(String.init)
        #expect(lines.count >= 2)
        var objects: [[String: JSONValue]] = []
        for line in lines {
            let object = try? JSONParser.parse(Array(line.utf8)).objectValue
            #expect(object != nil, "not a JSON object: \(line)")
            if let object {
                objects.append(object)
                #expect(object["time"]?.stringValue != nil && object["level"]?.stringValue != nil && object["message"]?.stringValue != nil)
            }
        }
        #expect(objects.contains { $0["message"]?.stringValue?.hasPrefix("PushRelay ") == true }, "the start line")
        let limited = objects.filter { $0["message"] == "rate limited" }
        #expect(limited.count == 1)
        #expect(limited.first?["request_id"] == "ha-2")
        #expect(limited.first?["token"]?.stringValue?.contains("json-log-token") == false, "the token is shortened")
    }
}
