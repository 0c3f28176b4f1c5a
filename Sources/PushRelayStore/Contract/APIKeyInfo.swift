import PushRelayCore

/// An API key as listed (the key itself is never stored).
public struct APIKeyInfo: Sendable, Equatable {
    public var id: Int64
    public var label: String?
    public var createdAt: String
    public var revokedAt: String?
}
