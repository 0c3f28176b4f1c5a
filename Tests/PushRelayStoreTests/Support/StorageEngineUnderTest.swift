import Foundation
import PushRelayPostgres
import PushRelayStore
import Testing

/// The storage engines the contract suite runs against. Each test opens a fresh, empty, migrated store of each engine.
/// A new engine joins the suite by adding a case here.
enum StorageEngineUnderTest: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    /// A fresh database on the test process's throwaway server (`PostgresServer`); skipped, with how to install
    /// PostgreSQL, where its binaries are missing (a failure under `CI=true`).
    case postgres

    static var all: [StorageEngineUnderTest] { allCases }

    var testDescription: String { rawValue }

    /// A fresh store; call `close` at the end.
    func open() async throws -> (storage: Storage, close: @Sendable () async -> Void) {
        switch self {
        case .sqlite:
            let db = try PushRelayDatabase(path: TempPath.make())
            try db.migrate()
            return (.sqlite(db), { try? await db.flushAndClose() })
        case .postgres:
            let storage = try await Storage.postgres(try await PostgresServer.freshDatabase(), logger: PostgresServer.logger)
            return (storage, { try? await storage.engine.flushAndClose() })
        }
    }
}

/// A path for a new SQLite file in a directory of its own.
enum TempPath {
    static func make() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushrelay-store-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("test.sqlite").path
    }
}

/// Polls `condition` until it holds, or records an issue after `seconds`.
func eventually(
    _ what: String,
    seconds: Double = 30,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    Issue.record("timed out waiting for: \(what)", sourceLocation: sourceLocation)
}
