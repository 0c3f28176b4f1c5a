import Foundation
import PushRelayCore

/// A slot reserved (or refused) for one counted request.
public struct QuotaReservation: Sendable, Equatable {
    public var day: UTCDay
    public var pushToken: String
    public var maximum: Int
    public var decision: QuotaDecision

    public var rateLimits: RateLimits { RateLimits(counters: decision.counters, maximum: maximum, day: day) }
}
