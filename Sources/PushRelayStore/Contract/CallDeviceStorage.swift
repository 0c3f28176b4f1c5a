import Foundation

/// Devices registered for call-invite pushes, with their encryption keys. Every lookup names the API key the device
/// belongs to: another key's device is not there.
public protocol CallDeviceStorage: Sendable {
    func addDevice(_ d: CallDevice, now: Date) async throws
    func device(id: String, apiKeyID: Int64) async throws -> CallDevice?
    func deleteDevice(id: String, apiKeyID: Int64) async throws -> Bool
    func rotateKey(id: String, apiKeyID: Int64, key: [UInt8], now: Date) async throws -> Bool
    /// The encryption key of the device registered with this push token (`encrypt_payloads`).
    func encryptionKey(forPushToken token: String) async throws -> [UInt8]?
}
