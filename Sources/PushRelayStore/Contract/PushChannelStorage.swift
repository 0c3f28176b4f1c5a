import Foundation
import PushRelayCore

/// Home Assistant's push channel: channel tokens, messages owed to devices, push-channel counters, and
/// the push-token ↔ webhook-id bindings.
public protocol PushChannelStorage: Sendable {
    /// Creates a random channel token bound to `webhookID`; returns the token (shown once, stored hashed) and its id.
    func createToken(webhookID: String, label: String?, now: Date) async throws -> (token: String, id: Int64)
    /// The webhook id of a live (not revoked) channel token, looked up by its digest.
    func webhookID(forChannelToken token: String) async throws -> String?
    /// Revokes a channel token. Returns whether a live one was revoked.
    func revokeToken(id: Int64, now: Date) async throws -> Bool
    func listTokens() async throws -> [PushChannelTokenInfo]

    /// Stores (or replaces) a message, bumping `count` for its token today. Returns once durable.
    func save(_ m: PushChannelMessage, count: PushChannelCounter?) async throws
    /// Queues the same write and returns at once; the ticket answers once it is durable.
    func enqueueSave(_ m: PushChannelMessage, count: PushChannelCounter?) -> WriteTicket<Void>
    /// Deletes a message, bumping `count` for `token` today. Returns whether it existed.
    @discardableResult
    func remove(id: String, count: PushChannelCounter?, token: String?, now: Date) async throws -> Bool
    /// Bumps a push-channel counter for a token today.
    @discardableResult
    func count(_ counter: PushChannelCounter, token: String, now: Date) -> WriteTicket<Void>
    /// Messages owed to a device, by its webhook id or push token, oldest first. A row holding a value this build
    /// cannot read (`PushChannelMessage.reading` refuses it: a newer build's, or one changed by hand) is left out and
    /// left in place, so that one such row never stops the device's other messages.
    func pending(webhookID: String?, pushToken: String?) async throws -> [PushChannelMessage]
    /// Every stored message, oldest first (for recovery at start); rows this build cannot read are left out, as in
    /// `pending`.
    func all() async throws -> [PushChannelMessage]
    /// Deletes the messages expired at `now`. Returns how many.
    func dropExpired(now: Date) async throws -> Int
    func counters(pushToken: String, day: UTCDay) async throws -> (delivered: Int, fallbacks: Int, dropped: Int)
    /// How many messages are stored for `pushToken`, in any state: the figure the local-only queue's per-device bound
    /// is checked against. An index look-up.
    func storedCount(pushToken: String) async throws -> Int
    /// The size of every stored message's notification JSON, in UTF-8 bytes: the figure the local-only queue's total
    /// bound is checked against. Reads the whole table: callers keep the figure and read it again now and then.
    func storedBytes() async throws -> Int

    /// The binding of a push token, or of a webhook id.
    func binding(pushToken: String?, webhookID: String?) async throws -> PushChannelBinding?
    /// Stores `binding`, replacing the token's former webhook id and the webhook id's former token (both sides are
    /// unique), and records `now` as the time Home Assistant last sent the pair (also when it was stored already).
    /// Returns the pairs it replaced. `whileWriting` runs inside the write, in commit order with every other binding
    /// write, with the replaced pairs: callers keep caches in step there. A pair past `FieldLimits` (push token
    /// `FieldLimits.token`, webhook id `FieldLimits.identifier` UTF-8 bytes) is refused with `PushChannelBinding.TooLong`
    /// before anything is written.
    func bind(
        _ binding: PushChannelBinding,
        now: Date,
        whileWriting: @escaping @Sendable ([PushChannelBinding]) -> Void
    ) async throws
        -> [PushChannelBinding]
    func bindings() async throws -> [PushChannelBinding]
    /// Records `now` as the time Home Assistant last sent `binding`, when exactly that pair is stored; never stores,
    /// replaces or moves a pair. Returns whether it was stored.
    @discardableResult
    func refresh(_ binding: PushChannelBinding, now: Date) async throws -> Bool
    /// Deletes at most `limit` bindings Home Assistant has not sent since `cutoff`, oldest first, in one short
    /// transaction (an index walk: the cost does not grow with the table). Returns how many; fewer than `limit` means
    /// none is left. `PruneService` runs it with the retention (`quota.retention_days`).
    func pruneBindings(notSentSince cutoff: Date, limit: Int) async throws -> Int
}

extension PushChannelStorage {
    public func save(_ m: PushChannelMessage) async throws {
        try await save(m, count: nil)
    }

    public func enqueueSave(_ m: PushChannelMessage) -> WriteTicket<Void> {
        enqueueSave(m, count: nil)
    }

    @discardableResult
    public func remove(id: String, count: PushChannelCounter? = nil, token: String? = nil) async throws -> Bool {
        try await remove(id: id, count: count, token: token, now: Date())
    }

    public func binding(pushToken: String) async throws -> PushChannelBinding? {
        try await binding(pushToken: pushToken, webhookID: nil)
    }

    public func binding(webhookID: String) async throws -> PushChannelBinding? {
        try await binding(pushToken: nil, webhookID: webhookID)
    }

    public func bind(_ binding: PushChannelBinding, now: Date) async throws -> [PushChannelBinding] {
        try await bind(binding, now: now, whileWriting: { _ in })
    }
}
