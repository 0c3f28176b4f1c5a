import Foundation
import PushRelayCore

/// One row of `daily_usage` joined with the token's override.
public struct UsageRow: Sendable, Equatable, Codable {
    public var day: String
    public var pushToken: String
    public var appID: String?
    public var attempts: Int
    public var successful: Int
    public var errors: Int
    public var noticeSent: Bool
    public var limitOverride: Int?
    public var updatedAt: String

    public init(
        day: String,
        pushToken: String,
        appID: String? = nil,
        attempts: Int,
        successful: Int,
        errors: Int,
        noticeSent: Bool,
        limitOverride: Int? = nil,
        updatedAt: String
    ) {
        self.day = day
        self.pushToken = pushToken
        self.appID = appID
        self.attempts = attempts
        self.successful = successful
        self.errors = errors
        self.noticeSent = noticeSent
        self.limitOverride = limitOverride
        self.updatedAt = updatedAt
    }

    public var counters: UsageCounters { UsageCounters(attempts: attempts, successful: successful, errors: errors) }
}
