import Foundation
import Logging
import PushRelayCore
import PushRelayStore

/// Channels held by other instances on the same database (PostgreSQL): presence, hand-offs of notifications to the
/// instance that holds a device's channel, heartbeats, and settling the messages of instances that stopped.
///
/// A handed-off message is stored and owned by the instance that accepted it: its timer settles it (confirmed on
/// the other instance, or to the cloud after `channel.confirm_timeout_ms`).
package final class PushChannelInstances: Sendable {
    /// An instance whose heartbeat is older than this is dead to the others: nothing is routed to it and a live
    /// instance settles its unconfirmed messages. Heartbeats go every `heartbeatInterval`.
    static let instanceStaleAfter = Duration.seconds(3)
    static let heartbeatInterval = Duration.seconds(1)

    package let routing: any PushChannelRouting
    package let store: any PushChannelStorage
    package let settings: PushChannelSettings
    package let channels: PushChannelIndex
    package let confirmations: PushChannelConfirmations
    /// The bounds of the messages stored for a device: a message for a no-fallback channel goes under them.
    package let waiting: LocalOnlyQueue
    package let clock: any TimePort
    package let logger: Logger
    /// Messages another instance handed here and that were sent on a confirming channel, with when to forget them.
    private let remote = Locked<[String: (subscription: PushChannelSubscription, forgetAt: Date)]>([:])
    /// Whether another instance may hold a channel now: when none can, a notification does not ask the database.
    private let peers = Locked(PeerChannelsView())

    package init(
        routing: any PushChannelRouting,
        store: any PushChannelStorage,
        settings: PushChannelSettings,
        channels: PushChannelIndex,
        confirmations: PushChannelConfirmations,
        waiting: LocalOnlyQueue,
        clock: any TimePort,
        logger: Logger
    ) {
        self.waiting = waiting
        self.routing = routing
        self.store = store
        self.settings = settings
        self.channels = channels
        self.confirmations = confirmations
        self.clock = clock
        self.logger = logger
    }

    /// Hands a notification to the instance that holds its device's channel, when another live instance does.
    /// Returns the message id, or nil: then the caller takes the cloud route. While no other live instance holds any
    /// channel (the last heartbeat said so, and no presence claim came since), the database is not asked. A message for
    /// a channel without a fallback stays stored until the device confirms it, so it goes under `waiting`'s bounds
    /// (past them: nil).
    package func deliver(_ n: HANotification, platform: HAPlatform) async -> String? {
        guard othersMayHoldChannels else { return nil }
        let holder: PushChannelHolder?
        do {
            holder = try await routing.holder(webhookID: n.registrationInfo.webhookID, pushToken: n.pushToken, staleAfter: Self.instanceStaleAfter)
        } catch {
            logger.warning("could not look up which instance holds a channel", metadata: ["error": .string("\(error)")])
            return nil
        }
        guard let holder else { return nil }
        let message = PushChannelMessage(n, platform: platform, state: .unconfirmed, fallback: holder.fallback, now: clock.now(), settings: settings)
        do {
            if holder.fallback {
                try await store.save(message, count: .delivered)
            } else {
                guard case .queued = try await waiting.admit(message, save: { try await store.save(message, count: .delivered) }) else { return nil }
            }
        } catch {
            logger.warning("could not store a message for another instance's channel", metadata: ["error": .string("\(error)")])
            return nil
        }
        clock.schedule(after: confirmations.confirmTimeout) { [confirmations] in
            confirmations.work.submit { await confirmations.release(message) }
        }
        do {
            try await routing.handOff(messageID: message.id, to: holder.instanceID)
        } catch {
            // The stored message is settled by the timer above: to the cloud, or queued.
            logger.warning("could not hand a message to another instance", metadata: ["error": .string("\(error)")])
        }
        return message.id
    }

    /// A message another instance handed to this one: sent on the device's channel here, if it is still here.
    func receiveHandOff(_ id: String) async {
        let message: PushChannelMessage?
        do {
            message = try await routing.message(id: id)
        } catch {
            logger.warning("could not read a handed-off channel message", metadata: ["error": .string("\(error)")])
            return
        }
        guard let message, message.state == .unconfirmed, let n = try? HANotification(body: message.notification) else { return }
        guard let sub = channels.subscription(for: n) else { return }
        if sub.supportConfirm {
            let forgetAt = clock.now().addingTimeInterval(Double(settings.confirmTimeoutMs) / 1000 * 2)
            remote.withLock { $0[id] = (sub, forgetAt) }
            sub.connection.send(sub.event(n, confirmID: id))
        } else if sub.connection.send(sub.event(n, confirmID: nil)) {
            try? await store.remove(id: id)
        }
    }

    /// A confirm for a message another instance handed here: true when this confirm removed it (before the other
    /// instance's timeout did).
    package func confirm(_ confirmID: String, webhookID: String, connection: PushChannelConnection) async -> Bool {
        let known = remote.withLock { r -> Bool in
            guard let entry = r[confirmID], entry.subscription.webhookID == webhookID, entry.subscription.connection === connection else {
                return false
            }
            r[confirmID] = nil
            return true
        }
        guard known else { return false }
        do {
            return try await store.remove(id: confirmID)
        } catch {
            logger.error("could not delete a confirmed channel message", metadata: ["error": .string("\(error)")])
            return false
        }
    }

    /// Tells the other instances that this one holds `sub`'s channel.
    package func claimPresence(_ sub: PushChannelSubscription) async {
        do {
            try await routing.claimPresence(
                webhookID: sub.webhookID,
                pushToken: sub.pushToken,
                supportConfirm: sub.supportConfirm,
                fallback: sub.fallback
            )
        } catch {
            logger.warning("could not record a channel's presence", metadata: ["error": .string("\(error)")])
        }
    }

    /// Withdraws this instance's presence for webhook ids it no longer holds a channel for.
    package func releasePresence(_ webhookIDs: [String]) async {
        for webhookID in webhookIDs where !channels.holds(webhookID: webhookID) {
            do {
                try await routing.releasePresence(webhookID: webhookID)
            } catch {
                logger.warning("could not withdraw a channel's presence", metadata: ["error": .string("\(error)")])
            }
        }
    }

    /// Settles the unconfirmed messages of dead instances (each once, across instances), and forgets what this
    /// instance was told to wait for long ago.
    func settleOrphans() async {
        let now = clock.now()
        remote.withLock { r in r = r.filter { $0.value.forgetAt > now } }
        do {
            let orphans = try await routing.orphanedMessages(staleAfter: Self.instanceStaleAfter, limit: 500)
            if !orphans.isEmpty { logger.info("settling \(orphans.count) channel messages of instances that stopped") }
            for m in orphans { await confirmations.release(m) }
            try await routing.forgetDeadInstances(staleAfter: Self.instanceStaleAfter)
        } catch  where error.isShutdownNoise {
        } catch {
            logger.warning("could not settle the channel messages of stopped instances", metadata: ["error": .string("\(error)")])
        }
    }

    /// One heartbeat, and what it says of the other instances' channels.
    package func heartbeat() async throws {
        let ticket = peers.withLock { $0.heartbeatStarting() }
        let othersHold = try await routing.heartbeat(staleAfter: Self.instanceStaleAfter)
        peers.withLock { $0.heartbeatAnswered(ticket, othersHold: othersHold) }
    }

    /// What another instance sent.
    package func received(_ event: PushChannelRoutingEvent) async {
        switch event {
        case .listening: peers.withLock { $0.listenStarted() }
        case .stoppedListening: peers.withLock { $0.listenLost() }
        case .presenceClaimed: peers.withLock { $0.presenceNotice() }
        case .handOff(let id): await receiveHandOff(id)
        }
    }

    /// Whether a notification asks the database which other instance holds its device's channel.
    package var othersMayHoldChannels: Bool { peers.withLock { $0.othersMayHoldChannels } }

    /// Keeps this instance's heartbeat, receives hand-offs and settles dead instances' messages, until cancelled.
    /// Its intervals run on the injected clock.
    package func run() async {
        try? await routing.heartbeat(staleAfter: Self.instanceStaleAfter)
        await withDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled {
                    do {
                        try await self.heartbeat()
                    } catch  where error.isShutdownNoise {
                        return
                    } catch {
                        self.logger.warning("instance heartbeat failed", metadata: ["error": .string("\(error)")])
                    }
                    try? await self.clock.sleep(for: Self.heartbeatInterval)
                }
            }
            group.addTask {
                for await event in self.routing.events() { await self.received(event) }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await self.clock.sleep(for: Self.instanceStaleAfter)
                    if Task.isCancelled { return }
                    await self.settleOrphans()
                }
            }
        }
    }
}
