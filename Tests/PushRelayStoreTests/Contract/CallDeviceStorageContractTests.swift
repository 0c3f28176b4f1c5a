import Foundation
import GRDB
import PushRelayCore
import PushRelaySQLite
import PushRelayStore
import Testing

@testable import PushRelayPostgres

/// What any engine's `CallDeviceStorage` and `APIKeyStorage` must do: a key sees only its own devices, and a token
/// belongs to the live key that registered it first; a device whose row holds a platform no build writes is refused,
/// naming the device, the column and the value, never read as another platform.
@Suite struct CallDeviceStorageContractTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(arguments: StorageEngineUnderTest.all)
    func keysAreLookedUpByDigestAndSeeOnlyTheirDevices(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let (key, id) = try await storage.apiKeys.createAPIKey(label: "app", now: now)
        let (_, other) = try await storage.apiKeys.createAPIKey(label: "other", now: now)
        #expect(try await storage.apiKeys.apiKeyID(forKey: key) == id)
        #expect(try await storage.apiKeys.apiKeyID(forKey: key + "x") == nil)
        let device = CallDevice(
            id: "dev-1",
            apiKeyID: id,
            platform: .android,
            appID: "io.app",
            pushToken: "push-1",
            voipToken: nil,
            label: nil,
            encryptionKey: Array(repeating: 7, count: 32)
        )
        #expect(try await storage.devices.addDevice(device, now: now) == .added)
        #expect(try await storage.devices.device(id: "dev-1", apiKeyID: id) == device)
        #expect(try await storage.devices.device(id: "dev-1", apiKeyID: other) == nil)
        #expect(try await storage.devices.deleteDevice(id: "dev-1", apiKeyID: other) == false)
        #expect(try await storage.devices.encryptionKey(forPushToken: "push-1") == Array(repeating: 7, count: 32))
        #expect(try await storage.devices.rotateKey(id: "dev-1", apiKeyID: id, key: Array(repeating: 9, count: 32), now: now))
        #expect(try await storage.devices.encryptionKey(forPushToken: "push-1") == Array(repeating: 9, count: 32))
        #expect(try await storage.apiKeys.revokeAPIKey(id: id, now: now))
        #expect(try await storage.apiKeys.apiKeyID(forKey: key) == nil)
        #expect(try await storage.apiKeys.listAPIKeys().count == 2)
        await close()
    }

    func device(_ id: String, key: Int64, push: String, voip: String? = nil, fill: UInt8) -> CallDevice {
        CallDevice(
            id: id,
            apiKeyID: key,
            platform: voip == nil ? .android : .ios,
            appID: "io.app",
            pushToken: push,
            voipToken: voip,
            label: nil,
            encryptionKey: Array(repeating: fill, count: 32)
        )
    }

    /// A second key holder cannot register a token another key registered: not the push token (which would make its
    /// key seal the victim's Home Assistant notifications), not the VoIP token (which would ring the victim's phone).
    /// The holder may register it again, and its newest key seals.
    @Test(arguments: StorageEngineUnderTest.all)
    func aTokenBelongsToTheKeyThatRegisteredItFirst(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let devices = storage.devices
        let (_, owner) = try await storage.apiKeys.createAPIKey(label: "owner", now: now)
        let (_, intruder) = try await storage.apiKeys.createAPIKey(label: "intruder", now: now)
        let voip = String(repeating: "ab", count: 32)
        #expect(try await devices.addDevice(device("victim", key: owner, push: "push-v", voip: voip, fill: 1), now: now) == .added)

        let later = now.addingTimeInterval(60)
        #expect(try await devices.addDevice(device("x-1", key: intruder, push: "push-v", fill: 2), now: later) == .pushTokenHeldByAnotherKey)
        #expect(
            try await devices.addDevice(device("x-2", key: intruder, push: "push-own", voip: voip, fill: 3), now: later)
                == .voipTokenHeldByAnotherKey
        )
        #expect(try await devices.device(id: "x-1", apiKeyID: intruder) == nil)
        #expect(try await devices.device(id: "x-2", apiKeyID: intruder) == nil)
        #expect(try await devices.encryptionKey(forPushToken: "push-v") == Array(repeating: 1, count: 32))
        // Nothing of the refused registration stayed: its own push token is free.
        #expect(try await devices.encryptionKey(forPushToken: "push-own") == nil)

        // The holder registers again (a new device, a new key): the newest seals, and both ring.
        #expect(try await devices.addDevice(device("victim-2", key: owner, push: "push-v", voip: voip, fill: 4), now: later) == .added)
        #expect(try await devices.encryptionKey(forPushToken: "push-v") == Array(repeating: 4, count: 32))
        #expect(try await devices.device(id: "victim", apiKeyID: owner) != nil)
        #expect(try await devices.device(id: "victim-2", apiKeyID: owner) != nil)

        // Once the holder deleted every device with the token, the token is free.
        #expect(try await devices.deleteDevice(id: "victim", apiKeyID: owner))
        #expect(try await devices.deleteDevice(id: "victim-2", apiKeyID: owner))
        #expect(try await devices.addDevice(device("x-3", key: intruder, push: "push-v", voip: voip, fill: 5), now: later) == .added)
        #expect(try await devices.encryptionKey(forPushToken: "push-v") == Array(repeating: 5, count: 32))
        #expect(try await devices.device(id: "x-3", apiKeyID: intruder) != nil)
        await close()
    }

    /// A revoked key holds nothing: the next live key that registered the token holds it (a device stored before
    /// registrations were refused), or another key may register it. With no live key holding a token, the newest
    /// device's key still seals: the app can open it, which is never worse than sending it readable.
    @Test(arguments: StorageEngineUnderTest.all)
    func aRevokedKeyHoldsNothing(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let devices = storage.devices
        let (_, first) = try await storage.apiKeys.createAPIKey(label: "first", now: now)
        let (_, second) = try await storage.apiKeys.createAPIKey(label: "second", now: now)
        let (_, third) = try await storage.apiKeys.createAPIKey(label: "third", now: now)
        #expect(try await devices.addDevice(device("first", key: first, push: "push-r", fill: 1), now: now) == .added)
        #expect(try await devices.addDevice(device("second", key: second, push: "push-r", fill: 2), now: now) == .pushTokenHeldByAnotherKey)

        #expect(try await storage.apiKeys.revokeAPIKey(id: first, now: now))
        #expect(try await devices.encryptionKey(forPushToken: "push-r") == Array(repeating: 1, count: 32))
        let later = now.addingTimeInterval(60)
        #expect(try await devices.addDevice(device("second", key: second, push: "push-r", fill: 2), now: later) == .added)
        #expect(try await devices.encryptionKey(forPushToken: "push-r") == Array(repeating: 2, count: 32))
        #expect(try await devices.device(id: "second", apiKeyID: second) != nil)
        #expect(try await devices.addDevice(device("third", key: third, push: "push-r", fill: 3), now: later) == .pushTokenHeldByAnotherKey)
        await close()
    }

    /// Of keys registering one token at once, exactly one gets it.
    @Test(arguments: StorageEngineUnderTest.all)
    func twoKeysRegisteringOneTokenAtOnceGetItOnce(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let devices = storage.devices
        var keys: [Int64] = []
        for n in 0..<8 { keys.append(try await storage.apiKeys.createAPIKey(label: "k\(n)", now: now).id) }
        let candidates = keys.enumerated().map { n, key in device("race-\(n)", key: key, push: "push-race", fill: UInt8(n + 1)) }
        let results = try await withThrowingTaskGroup(of: CallDeviceRegistration.self) { group in
            for d in candidates { group.addTask { [now] in try await devices.addDevice(d, now: now) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.filter { $0 == .added }.count == 1)
        #expect(results.filter { $0 == .pushTokenHeldByAnotherKey }.count == keys.count - 1)
        let reachable = try await withThrowingTaskGroup(of: Bool.self) { group in
            for d in candidates { group.addTask { try await devices.device(id: d.id, apiKeyID: d.apiKeyID) != nil } }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(reachable == 1)
        await close()
    }

    /// A device stored before registrations were refused, whose token another live key registered first, is not its
    /// key's: it is not rung and does not seal, though it is the newer one.
    @Test(arguments: StorageEngineUnderTest.all)
    func aDeviceWhoseTokenAnotherKeyHeldFirstIsNotThere(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let devices = storage.devices
        let (_, owner) = try await storage.apiKeys.createAPIKey(label: "owner", now: now)
        let (_, intruder) = try await storage.apiKeys.createAPIKey(label: "intruder", now: now)
        let voip = String(repeating: "cd", count: 32)
        #expect(try await devices.addDevice(device("owner", key: owner, push: "push-l", voip: voip, fill: 1), now: now) == .added)
        try await Self.insertUnchecked(device("intruder", key: intruder, push: "push-l", fill: 2), into: storage, at: now.addingTimeInterval(60))
        try await Self.insertUnchecked(
            device("intruder-voip", key: intruder, push: "push-own", voip: voip, fill: 3),
            into: storage,
            at: now.addingTimeInterval(60)
        )

        #expect(try await devices.encryptionKey(forPushToken: "push-l") == Array(repeating: 1, count: 32))
        #expect(try await devices.device(id: "intruder", apiKeyID: intruder) == nil)
        #expect(try await devices.device(id: "intruder-voip", apiKeyID: intruder) == nil)
        #expect(try await devices.device(id: "owner", apiKeyID: owner) != nil)
        // The intruder may still delete what it stored.
        #expect(try await devices.deleteDevice(id: "intruder", apiKeyID: intruder))
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func aDeviceHoldingAPlatformNoBuildWritesIsRefusedNamingTheColumnAndTheValue(engine: StorageEngineUnderTest) async throws {
        let (storage, execute, close) = try await engine.openWithPlainSQL()
        let (_, key) = try await storage.apiKeys.createAPIKey(label: "app", now: now)
        #expect(try await storage.devices.addDevice(device("dev-1", key: key, push: "push-1", fill: 7), now: now) == .added)
        for value in ["windows", "ANDROID", ""] {
            try await execute("UPDATE call_devices SET platform = '\(value)' WHERE id = 'dev-1'")
            await #expect(throws: StorageError.unreadableRow(table: "call_devices", id: "dev-1", column: "platform", value: value)) {
                try await storage.devices.device(id: "dev-1", apiKeyID: key)
            }
        }
        #expect(
            StorageError.unreadableRow(table: "call_devices", id: "dev-1", column: "platform", value: "windows").description
                == "row dev-1 of call_devices holds 'windows' in platform, a value this PushRelay cannot read"
        )
        await close()
    }

    /// Stores `d` with a plain insert, as a PushRelay that did not refuse held tokens did.
    static func insertUnchecked(_ d: CallDevice, into storage: Storage, at date: Date) async throws {
        let key = Data(d.encryptionKey).base64EncodedString()
        let stamp = ISO8601UTC.string(date)
        let platform = d.platform.rawValue
        if let database = storage.engine as? PushRelayDatabase {
            try await database.pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO call_devices (id, api_key_id, platform, app_id, push_token, voip_token, encryption_key, created_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [d.id, d.apiKeyID, platform, d.appID, d.pushToken, d.voipToken, key, stamp]
                )
            }
        } else if let engine = storage.engine as? PostgresStorageEngine {
            try await engine.rows(
                """
                INSERT INTO call_devices (id, api_key_id, platform, app_id, push_token, voip_token, encryption_key, created_at)
                VALUES (\(d.id), \(d.apiKeyID), \(platform), \(d.appID), \(d.pushToken), \(d.voipToken), \(key), \(stamp))
                """,
                write: true
            )
        } else {
            Issue.record("no plain insert for \(type(of: storage.engine))")
        }
    }
}
