import Foundation

/// API keys for the calls API. Keys are stored as digests and looked up by digest.
public protocol APIKeyStorage: Sendable {
    /// Creates a random key; returns it (shown once) and its id.
    func createAPIKey(label: String?, now: Date) async throws -> (key: String, id: Int64)
    /// The id of a live key.
    func apiKeyID(forKey key: String) async throws -> Int64?
    func listAPIKeys() async throws -> [APIKeyInfo]
    func revokeAPIKey(id: Int64, now: Date) async throws -> Bool
}
