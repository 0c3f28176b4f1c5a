import Foundation
import PushRelayConfiguration
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

@testable import PushRelayServer

/// What the README and `docs/` name exists: every config key in the configuration reference, every `PUSHRELAY_*`
/// variable, every `pushrelay` subcommand and every repository path.
@Suite struct DocsReferenceTests {
    /// The README and every Markdown file under docs/.
    static let documents: [(name: String, text: String)] = {
        let root = RepositoryRoot.url
        let docs = root.appendingPathComponent("docs")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? []).filter { $0.hasSuffix(".md") }.sorted()
        let files: [(String, URL)] =
            [("README.md", root.appendingPathComponent("README.md"))]
            + names.map { ("docs/\($0)", docs.appendingPathComponent($0)) }
        return files.compactMap { name, url in (try? String(contentsOf: url, encoding: .utf8)).map { (name, $0) } }
    }()

    static func matches(_ pattern: String, in text: String, group: Int = 1) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines])
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { m in
            Range(m.range(at: group), in: text).map { String(text[$0]) }
        }
    }

    /// Whether `key` (`section.key`, or `section.sub.key` for the nested sections) is a key the config reader knows.
    static func isKnown(_ key: String) -> Bool {
        let parts = key.split(separator: ".").map(String.init)
        guard parts.count == 2 || parts.count == 3, let section = PushRelayConfig.sections.first(where: { $0.name == parts[0] }) else {
            return false
        }
        return parts.count == 2 ? section.keys.names().contains(parts[1]) : section.keys.names(in: parts[1]).contains(parts[2])
    }

    @Test func everyKeyInTheConfigurationReferenceExists() throws {
        let text = try #require(Self.documents.first { $0.name == "docs/configuration.md" }?.text)
        let keys = Set(Self.matches(#"^\| `([a-z_]+(?:\.[a-z_]+)+)`"#, in: text))
        #expect(keys.count > 40, "the reference's tables were read: \(keys.count) keys")
        let unknown = keys.filter { !Self.isKnown($0) }.sorted()
        #expect(unknown.isEmpty, "docs/configuration.md names keys the server does not read: \(unknown)")
    }

    @Test func everyEnvironmentVariableTheDocsNameIsRead() {
        // Not config keys: the config file's path, the allocator switch, the benchmark scripts' binaries.
        let others: Set = ["PUSHRELAY_CONFIG", "PUSHRELAY_MALLOC_TUNING", "PUSHRELAY_BIN", "PUSHRELAY_DEV_BIN"]
        let overrides = Set(PushRelayConfig.overridableKeys.map(PushRelayConfig.environmentVariable(for:)))
        for (name, text) in Self.documents {
            let variables = Set(Self.matches(#"(PUSHRELAY_[A-Z][A-Z0-9_]*[A-Z0-9])"#, in: text))
            let unknown = variables.subtracting(overrides).subtracting(others).sorted()
            #expect(unknown.isEmpty, "\(name) names variables PushRelay does not read: \(unknown)")
        }
    }

    @Test func everySubcommandTheDocsNameExists() async throws {
        let help = try await CLI.run(["--help"])
        #expect(help.status == 0)
        let listed = help.out.components(separatedBy: "SUBCOMMANDS:").last ?? ""
        let subcommands = Set(Self.matches(#"^  ([a-z][a-z-]+) "#, in: listed))
        #expect(subcommands.contains("serve") && subcommands.contains("backup"), "\(subcommands)")
        for (name, text) in Self.documents {
            let named = Set(Self.matches(#"`pushrelay ([a-z][a-z-]+)"#, in: text))
            let missing = named.subtracting(subcommands).sorted()
            #expect(missing.isEmpty, "\(name) names subcommands the binary does not have: \(missing)")
        }
    }

    @Test func everyRepositoryPathTheDocsNameExists() {
        let root = RepositoryRoot.url
        for (name, text) in Self.documents {
            // Paths from the repository's root, not parts of URLs or of relative links (../deploy/…).
            let paths = Set(
                Self.matches(
                    #"(?<![\w/.:-])((?:docs|scripts|Benchmarks|deploy|config|migrations|Fuzz|Tests|Sources)/[A-Za-z0-9_./-]*[A-Za-z0-9_/])"#,
                    in: text
                )
            )
            let missing = paths.filter { !FileManager.default.fileExists(atPath: root.appendingPathComponent($0).path) }.sorted()
            #expect(missing.isEmpty, "\(name) names paths that do not exist: \(missing)")
        }
    }
}
