import Foundation
import PushRelayCore

/// A channel token as listed (the token itself is never stored).
public struct PushChannelTokenInfo: Sendable, Equatable {
    public var id: Int64
    public var webhookID: String
    public var label: String?
    public var createdAt: String
    public var revokedAt: String?

    public init(id: Int64, webhookID: String, label: String? = nil, createdAt: String, revokedAt: String? = nil) {
        self.id = id
        self.webhookID = webhookID
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

}
