import PushRelaySecurity

/// The limits on who may hold this instance's push channels, so that strangers cannot take the room of paired devices:
/// any 32-character string authenticates a websocket as a push token, and before Home Assistant has sent a pair
/// anyone may open a *provisional* channel with it.
///
/// - `channel.max_channels`: every channel;
/// - `channel.max_channels_per_address`: the channels of one client address (an IPv6 client's /64, counted as
///   `FailedAuthLimiter.key(for:)` counts);
/// - half of `channel.max_channels`: the provisional channels.
///
/// A provisional subscription past a limit is refused. A paired one (Home Assistant has sent its pair, or a channel
/// token's) takes the place of the oldest provisional channel within the limit it reached (the address's, or any),
/// and is refused only when there is none.
///
/// A provisional channel counts as paired once its pair is bound (`paired(_:)`): by a notification a provider took
/// on the token's quota, or one through a closed route (`PushChannelPairEvidence.proof`). A notification delivered over
/// the provisional channel itself pairs nothing, so a stranger's made-up pair, posted to the open routes, stays
/// provisional: it never outranks a paired device.
///
/// `PushChannelIndex` keeps one of these with its index, under its lock.
package struct PushChannelAdmission {
    package struct Limits: Sendable {
        package var channels: Int
        var perAddress: Int
        package var provisional: Int
    }

    package enum Refusal: Error, Equatable {
        /// `channel.max_channels` is reached and no provisional channel can make room.
        case channels
        /// The address holds `channel.max_channels_per_address` channels and none of them can make room.
        case address
        /// Half of `channel.max_channels` is held by provisional channels.
        case provisional
    }

    private struct Entry {
        let sub: PushChannelSubscription
        let address: String
        var provisional: Bool
        /// Registration order: the lowest is the oldest.
        let order: UInt64
    }

    private var entries: [ObjectIdentifier: Entry] = [:]
    private var perAddress: [String: Int] = [:]
    private var provisionalCount = 0
    private var nextOrder: UInt64 = 0

    /// The address key a subscriber's channels count under.
    package static func address(of sub: PushChannelSubscription) -> String {
        FailedAuthLimiter.key(for: sub.connection.peer)
    }

    /// Channels of `address`.
    package func count(address: String) -> Int { perAddress[address, default: 0] }

    /// Whether `sub` holds a channel that is still provisional.
    func isProvisional(_ sub: PushChannelSubscription) -> Bool { entries[ObjectIdentifier(sub)]?.provisional ?? false }

    /// What admitting `sub` from `address` takes, with `channels` held now and `old` (held, if any) leaving for it:
    /// the channels to evict for it (none, or the oldest provisional ones that make room), or why it is refused.
    package func plan(
        _ sub: PushChannelSubscription,
        address: String,
        provisional: Bool,
        replacing old: PushChannelSubscription?,
        channels: Int,
        limits: Limits
    ) -> Result<[PushChannelSubscription], Refusal> {
        let leaving = old.flatMap { entries[ObjectIdentifier($0)] }
        var evict: [PushChannelSubscription] = []
        let fromAddress = count(address: address) - (leaving?.address == address ? 1 : 0)
        if fromAddress >= limits.perAddress {
            guard !provisional, let victim = oldestProvisional(excluding: old, evict, address: address) else { return .failure(.address) }
            evict.append(victim)
        }
        if provisional, provisionalCount - (leaving?.provisional == true ? 1 : 0) >= limits.provisional {
            return .failure(.provisional)
        }
        if channels - (leaving == nil ? 0 : 1) - evict.count >= limits.channels {
            guard !provisional, let victim = oldestProvisional(excluding: old, evict, address: nil) else { return .failure(.channels) }
            evict.append(victim)
        }
        return .success(evict)
    }

    /// `sub` now holds a channel.
    package mutating func added(_ sub: PushChannelSubscription, address: String, provisional: Bool) {
        nextOrder += 1
        entries[ObjectIdentifier(sub)] = Entry(sub: sub, address: address, provisional: provisional, order: nextOrder)
        perAddress[address, default: 0] += 1
        if provisional { provisionalCount += 1 }
    }

    /// Home Assistant has sent `sub`'s pair: it no longer counts as provisional, nor gives way to a paired channel.
    package mutating func paired(_ sub: PushChannelSubscription) {
        guard var entry = entries[ObjectIdentifier(sub)], entry.provisional else { return }
        entry.provisional = false
        entries[ObjectIdentifier(sub)] = entry
        provisionalCount -= 1
    }

    /// `sub`'s channel ended (nothing happens when it holds none).
    package mutating func removed(_ sub: PushChannelSubscription) {
        guard let entry = entries.removeValue(forKey: ObjectIdentifier(sub)) else { return }
        let left = perAddress[entry.address, default: 1] - 1
        perAddress[entry.address] = left > 0 ? left : nil
        if entry.provisional { provisionalCount -= 1 }
    }

    /// The oldest provisional channel (of `address`, when given) other than `old` and those in `evicting`.
    private func oldestProvisional(
        excluding old: PushChannelSubscription?,
        _ evicting: [PushChannelSubscription],
        address: String?
    ) -> PushChannelSubscription? {
        var oldest: Entry?
        for entry in entries.values where entry.provisional && entry.sub !== old && (address == nil || entry.address == address) {
            guard !evicting.contains(where: { $0 === entry.sub }), entry.order < (oldest?.order ?? .max) else { continue }
            oldest = entry
        }
        return oldest?.sub
    }
}
