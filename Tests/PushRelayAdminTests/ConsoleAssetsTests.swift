import Foundation
import PushRelayTestHarness
import Testing

@testable import PushRelayAdmin
@testable import PushRelayServer

/// `ConsoleAssets` is generated from console/ at build time (EmbedPlugin, scripts/embed-console.sh): the same files.
@Suite struct ConsoleAssetsTests {
    static let repository = RepositoryRoot.url

    @Test func theEmbeddedFilesAreTheConsoleDirectory() throws {
        let dir = Self.repository.appendingPathComponent("console")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".html") || $0.hasSuffix(".css") || $0.hasSuffix(".js") }.sorted()
        #expect(ConsoleAssets.files.map(\.name).sorted() == names, "the build embeds console/ (EmbedPlugin)")
        for name in names {
            let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
            let embedded = ConsoleAssets.files.first { $0.name == name }?.text
            #expect(embedded == text, "console/\(name) differs from ConsoleAssets (EmbedPlugin)")
        }
    }

    @Test func thePageLoadsOnlyItsOwnFiles() throws {
        let page = try #require(ConsoleAssets.files.first { $0.name == "index.html" }?.text)
        let references = page.matches(of: /(?:src|href)="([^"]*)"/).map { String($0.output.1) }
        #expect(!references.isEmpty)
        for ref in references where !ref.hasPrefix("#") && ref != "data:," {
            #expect(ConsoleAssets.files.contains { $0.name == ref }, "index.html loads \(ref), which is not embedded")
        }
        #expect(!page.contains("style="), "no inline style (the CSP has no 'unsafe-inline')")
        #expect(page.matches(of: /<script(?![^>]*\bsrc=)[^>]*>/).isEmpty, "no inline script")
    }
}
