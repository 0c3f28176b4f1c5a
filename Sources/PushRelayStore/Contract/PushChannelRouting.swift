import Foundation
import PushRelayCore

/// Push channels across instances that share one database: which live instance holds a device's channel, the
/// hand-off of a stored message to that instance, and the liveness that lets the others take over a dead instance's
/// work. Only an engine several instances share implements it (PostgreSQL); on SQLite `Storage.routing` is nil and
/// every channel is local.
///
/// Liveness is a heartbeat judged by the database's clock: an instance whose heartbeat is older than `staleAfter` is
/// dead to the others (its channels are not routed to, its unconfirmed messages are taken over).
public protocol PushChannelRouting: Sendable {
    /// This instance's id (new at every start).
    var instanceID: String { get }
    /// Marks this instance alive now. Call it well within `staleAfter`, again and again.
    func heartbeat() async throws
    /// Records that this instance holds the channel of `webhookID` (a push-token channel names its token).
    func claimPresence(webhookID: String, pushToken: String?, supportConfirm: Bool, fallback: Bool) async throws
    /// Forgets this instance's presence for `webhookID` (another instance's claim is left alone).
    func releasePresence(webhookID: String) async throws
    /// The live instance other than this one holding the channel a notification with this webhook id and push
    /// token belongs on, with the channel's confirm and fallback settings.
    func holder(webhookID: String?, pushToken: String, staleAfter: Duration) async throws -> PushChannelHolder?
    /// Hands a stored message to `instance`; it arrives in that instance's `handOffs`. Not durable by itself: the
    /// message row is, and its owner's timer or a take-over settles it if the hand-off is lost.
    func handOff(messageID: String, to instance: String) async throws
    /// The ids of messages handed to this instance, as they arrive. Keeps listening (reconnecting) until cancelled.
    func handOffs() -> AsyncStream<String>
    /// A stored message by id.
    func message(id: String) async throws -> PushChannelMessage?
    /// Unconfirmed messages whose owner is dead (heartbeat older than `staleAfter`, or gone), for a live instance to
    /// settle; each is claimed by whoever removes it first (`PushChannelStorage.remove` answers true once).
    func orphanedMessages(staleAfter: Duration, limit: Int) async throws -> [PushChannelMessage]
    /// Removes dead instances' presence and instance rows. Returns how many instances were forgotten.
    @discardableResult
    func forgetDeadInstances(staleAfter: Duration) async throws -> Int
}

/// The instance holding a device's channel, and how that channel confirms.
public struct PushChannelHolder: Sendable, Equatable {
    public var instanceID: String
    public var supportConfirm: Bool
    public var fallback: Bool

    public init(instanceID: String, supportConfirm: Bool, fallback: Bool) {
        self.instanceID = instanceID
        self.supportConfirm = supportConfirm
        self.fallback = fallback
    }
}
