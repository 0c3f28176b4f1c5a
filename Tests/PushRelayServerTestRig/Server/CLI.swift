import Foundation
import PushRelayTestHarness

/// Runs the real `pushrelay` binary that `swift build` put next to the test bundle.
package struct CLI {
    package static var binary: URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pushrelay"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("pushrelay"),
            Bundle.main.bundleURL.appendingPathComponent("pushrelay"),
            RepositoryRoot.url.appendingPathComponent(".build/debug/pushrelay"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates.last!
    }

    /// Runs the binary on a thread of its own (no cooperative thread waits for it) and returns what it said.
    package static func run(_ args: [String], env: [String: String] = [:]) async throws -> (status: Int32, out: String, err: String) {
        let r = try await ProcessSpawn.run([binary.path] + args, environment: ProcessSpawn.environment(env))
        return (r.status, r.stdout, r.stderr)
    }
}
