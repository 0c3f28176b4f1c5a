import Foundation
import PushRelayCore

/// A message owed to a device over the push channel.
public struct PushChannelMessage: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Sent on a channel with confirmation; waiting for its confirm.
        case unconfirmed
        /// Waiting for the device to subscribe.
        case queued
    }

    public var id: String
    public var webhookID: String
    public var pushToken: String
    public var platform: HAPlatform
    /// The Home Assistant request body.
    public var notification: JSONValue
    public var state: State
    /// Go to the cloud route when unconfirmed (false: stay queued for the device).
    public var fallback: Bool
    public var createdAt: Date
    public var expiresAt: Date

    public init(
        id: String,
        webhookID: String,
        pushToken: String,
        platform: HAPlatform,
        notification: JSONValue,
        state: State,
        fallback: Bool,
        createdAt: Date,
        expiresAt: Date
    ) {
        self.id = id
        self.webhookID = webhookID
        self.pushToken = pushToken
        self.platform = platform
        self.notification = notification
        self.state = state
        self.fallback = fallback
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
