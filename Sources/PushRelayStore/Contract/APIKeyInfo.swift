import PushRelayCore

/// An API key as listed (the key itself is never stored).
public struct APIKeyInfo: Sendable, Equatable {
    public var id: Int64
    public var label: String?
    public var createdAt: String
    public var revokedAt: String?

    public init(id: Int64, label: String? = nil, createdAt: String, revokedAt: String? = nil) {
        self.id = id
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

}
