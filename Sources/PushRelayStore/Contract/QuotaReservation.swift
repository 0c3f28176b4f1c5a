import Foundation
import PushRelayCore

/// A slot reserved (or refused) for one counted request.
public struct QuotaReservation: Sendable, Equatable {
    public var day: UTCDay
    public var pushToken: String
    public var maximum: Int
    public var decision: QuotaDecision

    public init(day: UTCDay, pushToken: String, maximum: Int, decision: QuotaDecision) {
        self.day = day
        self.pushToken = pushToken
        self.maximum = maximum
        self.decision = decision
    }

    public var rateLimits: RateLimits { RateLimits(counters: decision.counters, maximum: maximum, day: day) }
}
