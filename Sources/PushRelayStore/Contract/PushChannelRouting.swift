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
    /// Marks this instance alive now, and answers whether another instance alive within `staleAfter` holds a channel
    /// (when none does, `holder` would find nothing). Call it well within `staleAfter`, again and again.
    func heartbeat(staleAfter: Duration) async throws -> Bool
    /// Records that this instance holds the channel of `webhookID` (a push-token channel names its token), and tells
    /// the other instances (`PushChannelRoutingEvent.presenceClaimed` in their `events`).
    func claimPresence(webhookID: String, pushToken: String?, supportConfirm: Bool, fallback: Bool) async throws
    /// Forgets this instance's presence for `webhookID` (another instance's claim is left alone).
    func releasePresence(webhookID: String) async throws
    /// The live instance other than this one holding the channel a notification with this webhook id and push
    /// token belongs on, with the channel's confirm and fallback settings.
    func holder(webhookID: String?, pushToken: String, staleAfter: Duration) async throws -> PushChannelHolder?
    /// Hands a stored message to `instance`; it arrives in that instance's `events`. Not durable by itself: the
    /// message row is, and its owner's timer or a take-over settles it if the hand-off is lost.
    func handOff(messageID: String, to instance: String) async throws
    /// What other instances tell this one, as it arrives: hand-offs, presence claims, and when listening for them
    /// starts and stops. Keeps listening (reconnecting) until the stream is no longer iterated.
    func events() -> AsyncStream<PushChannelRoutingEvent>
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

/// What another instance tells this one through `PushChannelRouting.events`.
public enum PushChannelRoutingEvent: Sendable, Equatable {
    /// Listening (again): hand-offs and presence claims sent from now on arrive. What was sent while not listening
    /// is lost (a lost hand-off is settled by its owner's timer).
    case listening
    /// The listen ended; it starts again after a backoff.
    case stoppedListening
    /// A stored message handed to this instance (`PushChannelRouting.message(id:)`).
    case handOff(messageID: String)
    /// Another instance claimed a device's channel.
    case presenceClaimed
}
