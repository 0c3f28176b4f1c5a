import Logging
import PushRelayCore
import PushRelayPushChannel
import PushRelayStore
import Testing

@testable import PushRelayServer

/// The index of live channels: one per webhook id and one per push token, replacement, the channel limit, and the
/// rules of a provisional subscription and of a binding.
///
/// ThreadSanitizer: the index, read and written from event loops and tasks.
@Suite struct PushChannelIndexTests {
    static func connection() -> PushChannelConnection {
        PushChannelConnection(peer: "test", bufferLimit: 16, sink: .init(write: { _ in }, close: { _, _ in }), logger: Logger(label: "test"))
    }

    static func sub(_ connection: PushChannelConnection, id: Int64 = 1, webhookID: String, token: String?) -> PushChannelSubscription {
        PushChannelSubscription(connection: connection, id: id, webhookID: webhookID, pushToken: token, supportConfirm: true, fallback: true)
    }

    static func notification(token: String, webhookID: String) throws -> HANotification {
        try HANotification(body: ["message": "m", "push_token": .string(token), "registration_info": ["webhook_id": .string(webhookID)]])
    }

    @Test func aNewSubscriptionReplacesOnlyTheChannelOfItsWebhookID() throws {
        let channels = PushChannelIndex(maxChannels: 10)
        let a = Self.sub(Self.connection(), webhookID: "hook-1", token: "token-1")
        #expect(try channels.register(a, provisional: false) == nil)
        #expect(channels.subscription(for: try Self.notification(token: "token-1", webhookID: "hook-1")) === a)
        // Same token on another webhook id: a channel of its own, which closes nothing and gets only its own pair.
        let b = Self.sub(Self.connection(), webhookID: "hook-2", token: "token-1")
        #expect(try channels.register(b, provisional: false) == nil)
        #expect(channels.count == 2)
        #expect(channels.subscription(for: try Self.notification(token: "token-1", webhookID: "hook-1")) === a)
        #expect(channels.subscription(for: try Self.notification(token: "token-1", webhookID: "hook-2")) === b)
        #expect(channels.subscription(for: try Self.notification(token: "token-1", webhookID: "hook-9")) == nil)
        #expect(channels.subscription(pushToken: "token-1", webhookID: nil) === b)
        #expect(channels.subscription(pushToken: "token-1", webhookID: "hook-1") === a)
        // The same webhook id again replaces its channel.
        let a2 = Self.sub(Self.connection(), webhookID: "hook-1", token: "token-1")
        #expect(try channels.register(a2, provisional: false) === a)
        #expect(channels.count == 2)
        // A channel-token channel (no push token) serves its webhook id's notifications only.
        let c = Self.sub(Self.connection(), webhookID: "hook-3", token: nil)
        #expect(try channels.register(c, provisional: false) == nil)
        #expect(channels.subscription(for: try Self.notification(token: "other", webhookID: "hook-3")) === c)
        #expect(channels.subscription(for: try Self.notification(token: "other", webhookID: "hook-2")) == nil)
    }

    @Test func theLimitAndTheProvisionalRule() throws {
        let channels = PushChannelIndex(maxChannels: 1)
        let owner = Self.sub(Self.connection(), webhookID: "hook-1", token: "token-1")
        _ = try channels.register(owner, provisional: false)
        #expect(throws: PushChannelIndex.SubscribeError.tooManyChannels) {
            try channels.register(Self.sub(Self.connection(), webhookID: "hook-2", token: "token-2"), provisional: false)
        }
        // A provisional stranger never replaces another credential's channel.
        #expect(throws: PushChannelIndex.SubscribeError.notBound) {
            try channels.register(Self.sub(Self.connection(), webhookID: "hook-1", token: "stranger"), provisional: true)
        }
        #expect(channels.subscription(pushToken: "token-1", webhookID: nil) === owner)
        // A replacement does not count against the limit.
        let again = Self.sub(Self.connection(), webhookID: "hook-1", token: "token-1")
        #expect(try channels.register(again, provisional: true) === owner)
    }

    @Test func removalByConnectionBySubscriptionAndByBinding() throws {
        let channels = PushChannelIndex(maxChannels: 10)
        let phone = Self.connection()
        let a = Self.sub(phone, id: 1, webhookID: "hook-1", token: "token-1")
        let b = Self.sub(phone, id: 2, webhookID: "hook-2", token: "token-2")
        let c = Self.sub(Self.connection(), webhookID: "hook-3", token: "token-3")
        for s in [a, b, c] { _ = try channels.register(s, provisional: false) }
        #expect(channels.remove(connection: phone, subscriptionID: 9) == nil)
        #expect(channels.remove(connection: phone, subscriptionID: 2) === b)
        #expect(channels.removeAll(of: phone).map(\.webhookID) == ["hook-1"])
        // A post naming token-3 with hook-4 proves nothing about token-3's device: its channel on hook-3 stays.
        #expect(channels.removeConflicting(with: PushChannelBinding(pushToken: "token-9", webhookID: "hook-1")).isEmpty)
        #expect(channels.removeConflicting(with: PushChannelBinding(pushToken: "token-3", webhookID: "hook-4")).isEmpty)
        // Home Assistant refreshed hook-3's token: the channel of the old token on hook-3 contradicts it.
        #expect(channels.removeConflicting(with: PushChannelBinding(pushToken: "token-4", webhookID: "hook-3")).map(\.webhookID) == ["hook-3"])
        #expect(channels.count == 0)
    }
}
