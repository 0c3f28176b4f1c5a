import Foundation
import PushRelayCore

/// Which local-delivery counter to bump.
public enum LocalCounter: String, Sendable {
    case delivered = "local_delivered"
    case fallbacks = "local_fallbacks"
    case dropped = "local_dropped"
}
