import Foundation
import PushRelayStore
import Testing

/// What any engine's `StorageEngine` must do: report itself healthy while writes go through, and probe on demand.
@Suite struct StorageEngineContractTests {
    @Test(arguments: StorageEngineUnderTest.all)
    func aWorkingEngineIsHealthyAndItsProbeWrites(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        #expect(storage.engine.health == .ok)
        #expect(await storage.engine.probe() == .ok)
        // The probe leaves nothing behind and does not disturb real data.
        let (key, id) = try await storage.apiKeys.createAPIKey(label: "app", now: Date())
        #expect(await storage.engine.probe() == .ok)
        #expect(try await storage.apiKeys.apiKeyID(forKey: key) == id)
        await close()
    }
}
