import Foundation
import PushRelayCore
import PushRelayTestHarness

@testable import PushRelaySQLite
@testable import PushRelayStore

/// A SQLite database with its `Storage`, for the tests of the SQLite implementation itself (group commit, WAL,
/// migrations, the writer's cache), which also read the file with plain SQL.
struct SQLiteFixture: Sendable {
    let database: PushRelayDatabase
    let storage: Storage

    init(_ path: String = TempPath.make(), migrate: Bool = true) throws {
        database = try PushRelayDatabase(path: path)
        if migrate { try database.migrate() }
        storage = .sqlite(database)
    }

    init(database: PushRelayDatabase) {
        self.database = database
        storage = .sqlite(database)
    }

    var quota: any QuotaLedger { storage.quota }
    var admin: any QuotaAdministration { storage.admin }
    var deliveries: any DeliveryLog { storage.deliveries }

    func reserve(
        _ token: String,
        appID: String? = nil,
        day: UTCDay,
        policy: QuotaPolicy = QuotaPolicy(),
        webhookID: String? = nil
    )
        async throws -> QuotaReservation
    {
        try await quota.reserve(pushToken: token, appID: appID, webhookID: webhookID, day: day, policy: policy, now: day.start)
    }
}
