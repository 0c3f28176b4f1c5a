import Foundation
import PushRelayCore

/// A push token a provider reported as dead.
public struct DeadToken: Sendable, Equatable {
    public var provider: String
    public var reason: String
    public var message: String?
    public var markedAt: String
    public var expiresAt: String
}
