import Foundation
import PushRelayTestHarness

#if canImport(Glibc)
import Glibc
#endif

/// The real `pushrelay serve` in a child process, on a config file the test wrote (with `http.port: 0`): started,
/// killed and started again on the same database.
package final class ServerProcess: Sendable {
    package let pid: pid_t
    package let port: Int
    package let logFile: String

    package var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    private init(pid: pid_t, port: Int, logFile: String) {
        self.pid = pid
        self.port = port
        self.logFile = logFile
    }

    /// Starts `pushrelay serve --config <config>` and waits (up to 30 s) for the port it listens on.
    package static func start(config: String, logFile: String) async throws -> ServerProcess {
        try await start(arguments: ["serve", "--config", config], environment: ProcessSpawn.environment(), logFile: logFile)
    }

    /// Starts `pushrelay` with `arguments` and `environment` (which must make it listen on port 0 of 127.0.0.1) and
    /// waits (up to 30 s) for the log line that says which port it listens on.
    package static func start(arguments: [String], environment: [String: String], logFile: String) async throws -> ServerProcess {
        FileManager.default.createFile(atPath: logFile, contents: nil)
        let pid = try ProcessSpawn.start([CLI.binary.path] + arguments, environment: environment, stderrPath: logFile)
        let read = { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }
        for _ in 0..<600 {
            try await Task.sleep(for: .milliseconds(50))
            let text = read()
            if let range = text.range(of: "listening on 127.0.0.1:"), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) {
                return ServerProcess(pid: pid, port: port, logFile: logFile)
            }
        }
        kill(pid, SIGKILL)
        _ = await ProcessSpawn.waitForExit(pid)
        throw ProcessSpawn.SpawnFailed(description: "server did not start: \(read())")
    }

    /// Sends `signal` and waits for the process to end; returns its exit status (128 + n for signal n).
    @discardableResult
    package func stop(_ signal: Int32) async -> Int32 {
        kill(pid, signal)
        return await ProcessSpawn.waitForExit(pid)
    }
}
