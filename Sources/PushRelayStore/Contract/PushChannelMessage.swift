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

    /// A `channel_messages` row as an engine reads it, column by column. A platform, state or time no build of
    /// PushRelay writes, or a notification that is not JSON, throws `StorageError.unreadableRow` naming the message, the
    /// column and the value (a notification's first characters only): the message is never sent as another platform's,
    /// nor given a state, a time or a body it was not stored with.
    public static func reading(
        id: String,
        webhookID: String,
        pushToken: String,
        platform: String,
        notification: String,
        state: String,
        fallback: Bool,
        createdAt: String,
        expiresAt: String
    ) throws(StorageError) -> PushChannelMessage {
        let row = RowReading(table: "channel_messages", id: id)
        let body: JSONValue
        do {
            body = try JSONParser.parse(Array(notification.utf8))
        } catch {
            let shown = notification.count > 40 ? notification.prefix(40) + "…" : notification
            throw .unreadableRow(table: "channel_messages", id: id, column: "notification", value: String(shown))
        }
        return PushChannelMessage(
            id: id,
            webhookID: webhookID,
            pushToken: pushToken,
            platform: try row.column("platform", platform, HAPlatform.init(rawValue:)),
            notification: body,
            state: try row.column("state", state, State.init(rawValue:)),
            fallback: fallback,
            createdAt: try row.column("created_at", createdAt, ISO8601UTC.date),
            expiresAt: try row.column("expires_at", expiresAt, ISO8601UTC.date)
        )
    }
}
