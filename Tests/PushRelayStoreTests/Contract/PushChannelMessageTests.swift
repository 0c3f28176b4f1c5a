import Foundation
import PushRelayCore
import PushRelayStore
import Testing

/// A `channel_messages` row is read back typed: a value no build writes is an error naming the message, the column and
/// the value (a notification by its first characters only), never a guessed platform, state, time or body.
@Suite struct PushChannelMessageTests {
    static func read(
        platform: String = "ios",
        notification: String = #"{"message": "hi"}"#,
        state: String = "unconfirmed",
        createdAt: String = "2026-11-21T13:05:00.000Z",
        expiresAt: String = "2026-11-21T14:05:00.000Z"
    ) throws(StorageError) -> PushChannelMessage {
        try PushChannelMessage.reading(
            id: "m1",
            webhookID: "w1",
            pushToken: "t1",
            platform: platform,
            notification: notification,
            state: state,
            fallback: true,
            createdAt: createdAt,
            expiresAt: expiresAt
        )
    }

    @Test func aReadableRowIsReadAsStored() throws {
        let m = try Self.read()
        #expect(m.platform == .ios && m.state == .unconfirmed && m.fallback)
        #expect(m.notification == ["message": "hi"])
        #expect(m.expiresAt.timeIntervalSince(m.createdAt) == 3600)
    }

    @Test func eachUnreadableColumnIsNamedWithItsValue() {
        func refused(_ column: String, _ value: String) -> StorageError {
            .unreadableRow(table: "channel_messages", id: "m1", column: column, value: value)
        }
        #expect(throws: refused("platform", "windows")) { try Self.read(platform: "windows") }
        #expect(throws: refused("state", "sent")) { try Self.read(state: "sent") }
        #expect(throws: refused("created_at", "yesterday")) { try Self.read(createdAt: "yesterday") }
        #expect(throws: refused("expires_at", "2026-13-45")) { try Self.read(expiresAt: "2026-13-45") }
        #expect(throws: refused("notification", #"{"message": "#)) { try Self.read(notification: #"{"message": "#) }
        let long = #"{"message": ""# + String(repeating: "x", count: 100)
        #expect(throws: refused("notification", String(long.prefix(40)) + "…")) { try Self.read(notification: long) }
        #expect(
            String(describing: refused("platform", "windows"))
                == "row m1 of channel_messages holds 'windows' in platform, a value this PushRelay cannot read"
        )
    }
}
