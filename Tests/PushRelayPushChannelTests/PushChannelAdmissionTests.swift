import Logging
import PushRelayCore
import PushRelayPushChannel
import PushRelayStore
import Testing

@testable import PushRelayServer

/// The channel limits in the index (`PushChannelAdmission`): per address, the provisional share, and which channel
/// gives way to a paired subscription.
@Suite struct PushChannelAdmissionTests {
    static func sub(_ webhookID: String, from peer: String, token: String? = nil) -> PushChannelSubscription {
        let connection = PushChannelConnection(
            peer: peer,
            bufferLimit: 16,
            sink: .init(write: { _ in }, close: { _, _ in }),
            logger: Logger(label: "test")
        )
        return PushChannelSubscription(
            connection: connection,
            id: 1,
            webhookID: webhookID,
            pushToken: token ?? "token-\(webhookID)",
            supportConfirm: true,
            fallback: true
        )
    }

    /// Registers and returns the channels evicted for it.
    static func register(_ channels: PushChannelIndex, _ sub: PushChannelSubscription, provisional: Bool) throws -> [String] {
        var evicted: [String] = []
        _ = try channels.register(sub, provisional: provisional) { evicted.append($0.webhookID) }
        return evicted
    }

    @Test func aPairedSubscriptionEvictsProvisionalChannelsOldestFirstAndNothingElse() throws {
        let channels = PushChannelIndex(maxChannels: 3, maxChannelsPerAddress: 10, maxProvisionalChannels: 2)
        #expect(try Self.register(channels, Self.sub("p1", from: "192.0.2.1"), provisional: true) == [])
        #expect(try Self.register(channels, Self.sub("p2", from: "192.0.2.2"), provisional: true) == [])
        #expect(throws: PushChannelIndex.SubscribeError.tooManyProvisionalChannels) {
            try Self.register(channels, Self.sub("p3", from: "192.0.2.3"), provisional: true)
        }
        #expect(try Self.register(channels, Self.sub("b1", from: "192.0.2.4"), provisional: false) == [])
        #expect(try Self.register(channels, Self.sub("b2", from: "192.0.2.4"), provisional: false) == ["p1"])
        #expect(try Self.register(channels, Self.sub("b3", from: "192.0.2.4"), provisional: false) == ["p2"])
        #expect(throws: PushChannelIndex.SubscribeError.tooManyChannels) {
            try Self.register(channels, Self.sub("b4", from: "192.0.2.4"), provisional: false)
        }
        #expect(channels.count == 3 && !channels.holds(webhookID: "p1") && !channels.holds(webhookID: "p2"))
        // With the paired channels only, a provisional subscription finds no room either.
        #expect(throws: PushChannelIndex.SubscribeError.tooManyChannels) {
            try Self.register(channels, Self.sub("p4", from: "192.0.2.5"), provisional: true)
        }
    }

    @Test func aProvisionalChannelThatHomeAssistantPairsNoLongerGivesWay() throws {
        let channels = PushChannelIndex(maxChannels: 2, maxChannelsPerAddress: 10, maxProvisionalChannels: 2)
        #expect(try Self.register(channels, Self.sub("device", from: "192.0.2.1", token: "device-token"), provisional: true) == [])
        #expect(try Self.register(channels, Self.sub("stranger", from: "192.0.2.2"), provisional: true) == [])
        // Home Assistant's first notification pairs the device's channel; a stranger's pair does not match it.
        channels.paired(with: PushChannelBinding(pushToken: "device-token", webhookID: "device"))
        channels.paired(with: PushChannelBinding(pushToken: "someone-else", webhookID: "stranger"))
        // A paired newcomer takes the stranger's place, never the device's.
        #expect(try Self.register(channels, Self.sub("paired", from: "192.0.2.3"), provisional: false) == ["stranger"])
        #expect(throws: PushChannelIndex.SubscribeError.tooManyChannels) {
            try Self.register(channels, Self.sub("paired-2", from: "192.0.2.4"), provisional: false)
        }
        #expect(channels.holds(webhookID: "device"))
    }

    @Test func anAddressFullOfStrangersGivesWayToItsOwnPairedDevice() throws {
        let channels = PushChannelIndex(maxChannels: 100, maxChannelsPerAddress: 2)
        #expect(try Self.register(channels, Self.sub("elsewhere", from: "198.51.100.1"), provisional: true) == [])
        #expect(try Self.register(channels, Self.sub("s1", from: "2001:db8::1"), provisional: true) == [])
        #expect(try Self.register(channels, Self.sub("s2", from: "2001:db8::2"), provisional: true) == [])
        #expect(throws: PushChannelIndex.SubscribeError.tooManyChannelsFromAddress) {
            try Self.register(channels, Self.sub("s3", from: "2001:db8::3"), provisional: true)
        }
        // The address's oldest provisional channel gives way, not the older one of another address.
        #expect(try Self.register(channels, Self.sub("device", from: "2001:db8::4"), provisional: false) == ["s1"])
        #expect(try Self.register(channels, Self.sub("device-2", from: "2001:db8::5"), provisional: false) == ["s2"])
        #expect(throws: PushChannelIndex.SubscribeError.tooManyChannelsFromAddress) {
            try Self.register(channels, Self.sub("device-3", from: "2001:db8::6"), provisional: false)
        }
        #expect(channels.holds(webhookID: "elsewhere"))
    }

    @Test func aReplacementTakesTheOldChannelsPlaceAndAnEndedChannelFreesIts() throws {
        let channels = PushChannelIndex(maxChannels: 2, maxChannelsPerAddress: 1)
        let first = Self.sub("hook-1", from: "192.0.2.1", token: "device")
        _ = try channels.register(first, provisional: true)
        // The same device again, from the same address and then from another: a replacement, never refused.
        let again = Self.sub("hook-1", from: "192.0.2.1", token: "device")
        #expect(try channels.register(again, provisional: true) === first)
        let moved = Self.sub("hook-1", from: "192.0.2.2", token: "device")
        #expect(try channels.register(moved, provisional: false) === again)
        // 192.0.2.1 holds nothing now; 192.0.2.2 holds its one channel, a paired one that gives way to nobody.
        _ = try channels.register(Self.sub("hook-2", from: "192.0.2.1"), provisional: false)
        #expect(throws: PushChannelIndex.SubscribeError.tooManyChannelsFromAddress) {
            try channels.register(Self.sub("hook-3", from: "192.0.2.2"), provisional: false)
        }
        #expect(channels.removeAll(of: moved.connection).count == 1)
        _ = try channels.register(Self.sub("hook-3", from: "192.0.2.2"), provisional: false)
        #expect(channels.count == 2)
    }
}
