/// What one instance knows of whether any other live instance holds a push channel, so that a notification asks the
/// database which instance holds its device's channel only when another one might. Pure: the caller feeds it what the
/// database said and keeps it under a lock.
///
/// The rule: "no other instance holds a channel" is believed only from a heartbeat's answer that was read while this
/// instance was already listening for other instances' presence notices, and when no notice and no change of the
/// listen came in between the heartbeat's start and its answer. A claim that committed before the heartbeat read the
/// database is in its answer; one that committed after sends a notice this instance hears. Until then, and whenever
/// the listen is lost, another instance may hold a channel.
public struct PeerChannelsView: Sendable, Equatable {
    /// A heartbeat in flight: what the view was when it started.
    public struct Ticket: Sendable, Equatable {
        fileprivate let changes: UInt64
        fileprivate let listening: Bool
    }

    private var listening = false
    private var othersMayHold = true
    /// Counts the notices and the listen's changes, so that an answer read before one of them is not believed.
    private var changes: UInt64 = 0

    public init() {}

    /// False only when no other live instance can hold a channel now: the database need not be asked.
    public var othersMayHoldChannels: Bool { othersMayHold }

    /// The listen for presence notices is established (again): notices from now on are heard.
    public mutating func listenStarted() {
        listening = true
        othersMayHold = true
        changes &+= 1
    }

    /// The listen ended: notices may be missed until it is established again.
    public mutating func listenLost() {
        listening = false
        othersMayHold = true
        changes &+= 1
    }

    /// Another instance claimed a channel.
    public mutating func presenceNotice() {
        othersMayHold = true
        changes &+= 1
    }

    /// Call before a heartbeat asks the database; pass the ticket to `heartbeatAnswered`.
    public func heartbeatStarting() -> Ticket {
        Ticket(changes: changes, listening: listening)
    }

    /// The heartbeat's answer: whether another live instance held a channel when it read the database.
    public mutating func heartbeatAnswered(_ ticket: Ticket, othersHold: Bool) {
        if othersHold {
            othersMayHold = true
            return
        }
        guard ticket.listening, listening, ticket.changes == changes else { return }
        othersMayHold = false
    }
}
