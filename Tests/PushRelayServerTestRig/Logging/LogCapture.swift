import Foundation
import Logging
import PushRelayConfiguration
import PushRelayCore
import PushRelayHTTP
import PushRelaySQLite
import PushRelayServer
import PushRelayStore
import PushRelayTestHarness
import Synchronization
import Testing

/// Every log line a test server writes, at every level (the server logs at `trace` in tests), with its metadata: so
/// that `TestServer.with` can check, after each test, that no secret of that server reached a log line.
///
/// Lines at `warning` and above still go to standard error as before.
package final class LogCapture: Sendable {
    package struct Line: Sendable, CustomStringConvertible {
        package var level: Logger.Level
        /// The message, its metadata and the error, as one searchable text.
        package var text: String
        /// The id of the request being served when the line was written (`RequestID.current`), if any.
        package var requestID: String? = nil
        package var description: String { "[\(level)] \(text)" }
    }

    private let captured = Locked<[Line]>([])
    /// Past this many lines only the count grows (a long test must not hold its whole log in memory).
    package static let maxLines = 200_000

    package init() {}
    private let dropped = Atomic<Int>(0)

    package var lines: [Line] { captured.withLock { $0 } }

    /// A trace-level logger writing here.
    package func logger(label: String) -> Logger {
        var logger = Logger(label: label) { label in Handler(capture: self, echo: StreamLogHandler.standardError(label: label)) }
        logger.logLevel = .trace
        return logger
    }

    fileprivate func record(_ line: Line) {
        let full = captured.withLock { lines in
            guard lines.count < Self.maxLines else { return true }
            lines.append(line)
            return false
        }
        if full { dropped.add(1, ordering: .relaxed) }
    }

    package struct Handler: LogHandler {
        package let capture: LogCapture
        package var echo: StreamLogHandler
        package var metadata: Logger.Metadata = [:]
        package var logLevel: Logger.Level = .trace
        /// What is echoed to standard error, as the test logger did before it captured.
        package static let echoLevel: Logger.Level = .warning

        package init(capture: LogCapture, echo: StreamLogHandler) {
            self.capture = capture
            self.echo = echo
            self.echo.logLevel = Self.echoLevel
        }

        package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set {
                metadata[key] = newValue
                echo[metadataKey: key] = newValue
            }
        }

        package func log(event: LogEvent) {
            var all = RequestID.metadataProvider.get()
            for (k, v) in metadata { all[k] = v }
            for (k, v) in event.metadata ?? [:] { all[k] = v }
            var text = "\(event.message)"
            for (k, v) in all.sorted(by: { $0.key < $1.key }) { text += " \(k)=\(v)" }
            if let error = event.error { text += " error=\(error)" }
            capture.record(Line(level: event.level, text: text, requestID: all["request_id"].map { "\($0)" }))
            if event.level >= Self.echoLevel { echo.log(event: event) }
        }
    }

    // MARK: - Secrets

    /// Shapes of secrets no log line may hold whatever server wrote it: channel tokens, API keys, OAuth access tokens,
    /// signed JWTs (APNs provider tokens, VAPID, OAuth assertions), PEM private keys, bearer credentials.
    nonisolated(unsafe) static let secretShapes: [(name: String, pattern: Regex<Substring>)] = [
        ("channel token", /prc_[A-Za-z0-9_\-]{16,}/),
        ("API key", /prk_[A-Za-z0-9_\-]{16,}/),
        ("OAuth access token", /ya29\.[A-Za-z0-9._\-]{8,}/),
        ("JWT", /eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}/),
        ("PEM key", /-----BEGIN [A-Z ]*PRIVATE KEY-----/),
        ("Authorization header value", /(?i)(?:bearer|vapid t=)\s*[A-Za-z0-9._\-]{20,}/),
    ]

    /// The secrets of one server: its admin token, the key material in its providers' options (inline or in the
    /// files they name), and every full push token (and pushkey) its database holds.
    package static func secrets(of config: PushRelayConfig, database: PushRelayDatabase) async -> [String] {
        var out: [String] = []
        if let admin = config.adminToken { out.append(admin) }
        out += config.homeAssistant.keys
        for provider in config.providers.values {
            for (_, value) in provider.options {
                guard case .string(let s) = value else { continue }
                var text = s
                if !s.contains("-----BEGIN"), s.hasPrefix("/") || s.hasSuffix(".pem") || s.hasSuffix(".p8") || s.hasSuffix(".json"),
                    let file = try? String(contentsOfFile: s, encoding: .utf8)
                {
                    text = file
                }
                out += pemBodyLines(text)
            }
        }
        let tokenQueries = [
            "SELECT push_token FROM daily_usage", "SELECT push_token FROM delivery_log", "SELECT push_token FROM dead_tokens",
            "SELECT push_token FROM channel_bindings", "SELECT push_token FROM channel_messages", "SELECT pushkey FROM matrix_dedup",
            "SELECT pushkey FROM matrix_retry_queue", "SELECT push_token FROM call_devices", "SELECT voip_token FROM call_devices",
            "SELECT push_token FROM token_limits",
        ]
        let file = SQLiteFile(path: database.path)
        var tokens = Set<String>()
        for sql in tokenQueries {
            if let rows = try? await file.strings(sql) { tokens.formUnion(rows) }
        }
        // A short token is shown as its first 4 characters; only longer ones can be told apart from ordinary words.
        out += tokens.filter { $0.count >= 12 }
        return out
    }

    /// The base64 lines of PEM blocks (and of PEM text embedded in JSON, as in a service account's `private_key`).
    package static func pemBodyLines(_ text: String) -> [String] {
        guard text.contains("-----BEGIN") else { return [] }
        let normalized = text.replacingOccurrences(of: "\\n", with: "\n")
        return normalized.split(whereSeparator: \.isNewline).map { String($0).trimmingCharacters(in: .whitespaces) }
            .filter { $0.count >= 32 && !$0.hasPrefix("-----") && $0.allSatisfy { $0.isLetter || $0.isNumber || "+/=".contains($0) } }
    }

    /// Each line holding a secret: one of `secrets` verbatim or one of the `secretShapes`.
    package func leaks(of secrets: [String]) -> [(what: String, line: Line)] {
        var out: [(String, Line)] = []
        for line in lines {
            if let s = secrets.first(where: { line.text.contains($0) }) { out.append(("secret \(TokenDisplay.short(s))", line)) }
            for shape in Self.secretShapes where line.text.contains(shape.pattern) { out.append((shape.name, line)) }
        }
        return out
    }

    /// Records a test failure for each leak (at most a few, shortened: the failure message is a log too).
    package func expectNoLeaks(of secrets: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let found = leaks(of: secrets)
        for (what, line) in found.prefix(5) {
            var shown = line.text
            for s in secrets { shown = shown.replacingOccurrences(of: s, with: TokenDisplay.short(s)) }
            Issue.record("a log line holds a \(what): [\(line.level)] \(shown.prefix(300))", sourceLocation: sourceLocation)
        }
    }
}
