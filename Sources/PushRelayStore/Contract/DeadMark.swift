import Foundation
import PushRelayCore

/// What to remember about a token a provider reported as dead.
public struct DeadMark: Sendable, Equatable {
    public var provider: String
    public var reason: String
    public var message: String?
    public var until: Date

    public init(provider: String, reason: String, message: String?, until: Date) {
        self.provider = provider
        self.reason = reason
        self.message = message
        self.until = until
    }
}
