import PushRelayCore

/// What a quota reservation found.
public enum ReserveResult: Sendable, Equatable {
    /// A decision was made and written: `decision.allowed` says whether a slot was taken.
    case reserved(QuotaReservation)
    /// The token is remembered as dead: nothing was counted.
    case dead(DeadToken, RateLimits)
}
