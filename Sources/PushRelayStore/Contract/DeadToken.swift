import Foundation
import PushRelayCore

/// A push token a provider reported as dead.
public struct DeadToken: Sendable, Equatable {
    public var provider: String
    public var reason: String
    public var message: String?
    public var markedAt: String
    public var expiresAt: String

    public init(provider: String, reason: String, message: String? = nil, markedAt: String, expiresAt: String) {
        self.provider = provider
        self.reason = reason
        self.message = message
        self.markedAt = markedAt
        self.expiresAt = expiresAt
    }

}
