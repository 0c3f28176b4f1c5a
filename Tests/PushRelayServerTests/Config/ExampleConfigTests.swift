import Foundation
import PushRelayConfiguration
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

/// `config/pushrelay.example.yaml` as a user edits it: a changed key leaves the rest of the file valid.
@Suite struct ExampleConfigTests {
    static func example() throws -> String {
        try String(contentsOf: RepositoryRoot.url.appendingPathComponent("config/pushrelay.example.yaml"), encoding: .utf8)
    }

    /// The example with `delivery.deadline_ms` set to `deadline`, loaded from a file.
    static func load(deadline: Int) throws -> PushRelayConfig {
        let text = try example()
        #expect(text.contains("  deadline_ms: 8000\n"))
        let path = TestServer.tempPath()
        try text.replacingOccurrences(of: "  deadline_ms: 8000\n", with: "  deadline_ms: \(deadline)\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try PushRelayConfig.load(file: path, environment: [:])
    }

    /// The example leaves `delivery.max_wait_ms` to its default, half of the deadline, so a shorter deadline than the
    /// example's is accepted and the wait follows it.
    @Test(arguments: [8000, 4000, 3000, 20_000])
    func theWaitFollowsAChangedDeadline(deadline: Int) throws {
        let config = try Self.load(deadline: deadline)
        #expect(config.delivery.deadlineMs == deadline)
        #expect(config.delivery.maxWaitMs == deadline / 2)
    }

    /// A `max_wait_ms` the example names is a comment, and its value is the default the example describes.
    @Test func theExampleNamesTheDefaultWait() throws {
        let text = try Self.example()
        #expect(text.contains("  # max_wait_ms: 4000\n"))
        #expect(!text.contains("\n  max_wait_ms:"))
        #expect(try Self.load(deadline: 8000).delivery.maxWaitMs == 4000)
    }
}
