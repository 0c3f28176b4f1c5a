import Foundation

/// Devices registered for call-invite pushes, with their encryption keys. Every lookup names the API key the device
/// belongs to: another key's device is not there.
///
/// A token (a push token, or a VoIP token: two separate kinds) is held by the live API key that registered it first
/// (`CallDeviceRegistration`). Revoked keys hold nothing. Registrations made in the same millisecond are ordered by
/// API key id.
public protocol CallDeviceStorage: Sendable {
    /// Stores `d` unless another live API key holds its push token or its VoIP token; decided atomically, so of two
    /// keys registering one token at once, one is refused.
    @discardableResult
    func addDevice(_ d: CallDevice, now: Date) async throws -> CallDeviceRegistration
    /// The device, if it belongs to `apiKeyID` and that key holds its tokens. A device whose token another live key
    /// registered earlier is not there, however it came to be stored.
    func device(id: String, apiKeyID: Int64) async throws -> CallDevice?
    func deleteDevice(id: String, apiKeyID: Int64) async throws -> Bool
    func rotateKey(id: String, apiKeyID: Int64, key: [UInt8], now: Date) async throws -> Bool
    /// The key that seals Home Assistant notifications to this push token (`encrypt_payloads`): that of the newest
    /// device registered with it by the key that holds it. While no live key holds it, that of the newest device with
    /// it (of a revoked key): the app can still open what it seals, which is never worse than sending it readable. Nil
    /// when no device has this push token.
    func encryptionKey(forPushToken token: String) async throws -> [UInt8]?
}
