import Foundation
import PushRelayCore

/// Which of a token's daily push-channel counters to bump: a notification delivered over the device's push channel,
/// one that went to the cloud route instead (unconfirmed, or its write failed), one stored for the device that expired
/// before it was delivered.
///
/// The raw values are the `daily_usage` columns admins query; they say "local", Home Assistant's name for its local
/// push (the push channel).
public enum PushChannelCounter: String, Sendable {
    case delivered = "local_delivered"
    case fallbacks = "local_fallbacks"
    case dropped = "local_dropped"
}
