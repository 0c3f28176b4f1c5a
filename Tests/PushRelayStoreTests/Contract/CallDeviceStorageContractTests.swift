import Foundation
import PushRelayStore
import Testing

/// What any engine's `CallDeviceStorage` and `APIKeyStorage` must do: a key sees only its own devices.
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
        try await storage.devices.addDevice(device, now: now)
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
}
