import Foundation
import PushRelayTestHarness

#if canImport(Glibc)
import Glibc
#endif

/// Debian's nginx running the reverse-proxy config `docs/deployment.md` gives, word for word but for three lines: it
/// listens on a loopback port without TLS (`listen 443 ssl http2;` and the two certificate lines go), and
/// `proxy_pass` names the test server's port instead of 8080. Any other edit of the documented block reaches this
/// nginx unchanged. Runs in the foreground as one process (no workers), with its files in a directory of its own.
package final class DocumentedNginx: Sendable {
    package let port: Int
    package let pid: pid_t
    package let directory: String

    /// The ```nginx block of `docs/deployment.md`.
    package static func documentedServerBlock() throws -> String {
        let doc = try String(contentsOf: RepositoryRoot.url.appendingPathComponent("docs/deployment.md"), encoding: .utf8)
        guard let start = doc.range(of: "```nginx\n"), let end = doc.range(of: "\n```", range: start.upperBound..<doc.endIndex) else {
            throw ProcessSpawn.SpawnFailed(description: "docs/deployment.md has no ```nginx block")
        }
        return String(doc[start.upperBound..<end.lowerBound])
    }

    /// Starts nginx in front of 127.0.0.1:`upstream` and waits (up to 10 s) until it accepts connections.
    package static func start(upstream: Int) async throws -> DocumentedNginx {
        var block = try documentedServerBlock()
        let port = try PostgresServerProcess.freePort()
        for (documented, replacement) in [
            ("listen 443 ssl http2;", "listen 127.0.0.1:\(port);"),
            ("proxy_pass http://127.0.0.1:8080;", "proxy_pass http://127.0.0.1:\(upstream);"),
        ] {
            guard block.contains(documented) else {
                throw ProcessSpawn.SpawnFailed(description: "the documented nginx block no longer says \(documented)")
            }
            block = block.replacingOccurrences(of: documented, with: replacement)
        }
        block = block.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("ssl_certificate") }
            .joined(separator: "\n")
        let directory = TempPath.directory(prefix: "pushrelay-nginx")
        let config = """
            daemon off;
            master_process off;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log info;
            events { worker_connections 256; }
            http {
                access_log \(directory)/access.log;
            \(block)
            }
            """
        try config.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        let pid = try ProcessSpawn.start(
            ["nginx", "-p", directory, "-c", directory + "/nginx.conf"],
            environment: ProcessSpawn.environment(),
            stderrPath: directory + "/stderr.log"
        )
        let nginx = DocumentedNginx(port: port, pid: pid, directory: directory)
        for _ in 0..<200 {
            if PostgresServerProcess.accepts(port: port) { return nginx }
            try await Task.sleep(for: .milliseconds(50))
        }
        await nginx.stop()
        throw ProcessSpawn.SpawnFailed(description: "nginx did not start: \(nginx.errors)")
    }

    private init(port: Int, pid: pid_t, directory: String) {
        self.port = port
        self.pid = pid
        self.directory = directory
    }

    /// nginx's own error log and stderr.
    package var errors: String {
        ["stderr.log", "error.log"].map { (try? String(contentsOfFile: directory + "/" + $0, encoding: .utf8)) ?? "" }.joined()
    }

    /// Stops nginx (SIGTERM, then SIGKILL after 5 s) and waits for it.
    package func stop() async {
        _ = await ProcessSpawn.stop(pid, SIGTERM, within: .seconds(5))
    }
}
