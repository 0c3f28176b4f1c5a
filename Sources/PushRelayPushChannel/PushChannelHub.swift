import Foundation
import Logging
import PushRelayCore
import PushRelayDelivery
import PushRelayStore

/// The push channel's rules, put together from the parts that own them:
/// - `PushChannelIndex`: which live channel serves which webhook id and push token;
/// - `PushChannelConfirmations`: messages waiting for a confirm, and their cloud fallback;
/// - `PushChannelInstances`: channels held by other instances on the same database (nil when alone);
/// - `PushChannelConfirmedEvents`: events (call invites) sent on a channel, waiting for their confirm;
/// - `PushChannelBindingRegistry`: which push token may subscribe to which webhook id.
///
/// Local first: a notification for a device with a live channel goes there; an unconfirmed one falls back to its
/// cloud route after `channel.confirm_timeout_ms`. A replacement channel takes over the old one's unconfirmed
/// messages; `fallback: false` keeps them queued for the device instead (within `LocalOnlyQueue`'s bounds: past them a
/// notification takes the cloud route), and queued messages are replayed on subscribe.
package final class PushChannelHub: PushChannelPort {
    package let store: any PushChannelStorage
    package let settings: PushChannelSettings
    package let channels: PushChannelIndex
    package let confirmations: PushChannelConfirmations
    package let instances: PushChannelInstances?
    let confirmedEvents: PushChannelConfirmedEvents
    package let bindings: PushChannelBindingRegistry
    /// The bounds of the messages stored for a device: a no-fallback channel's messages go under them.
    package let waiting: LocalOnlyQueue
    package let clock: any TimePort
    package let logger: Logger

    package init(
        store: any PushChannelStorage,
        settings: PushChannelSettings,
        fallback: any PushChannelFallback,
        waiting: LocalOnlyQueue,
        routing: (any PushChannelRouting)?,
        work: BackgroundWork,
        clock: any TimePort,
        logger: Logger
    ) {
        let channels = PushChannelIndex(settings: settings)
        let confirmations = PushChannelConfirmations(
            store: store,
            settings: settings,
            fallback: fallback,
            sharedWithOtherInstances: routing != nil,
            work: work,
            clock: clock,
            logger: logger
        )
        self.channels = channels
        self.confirmations = confirmations
        self.instances = routing.map {
            PushChannelInstances(
                routing: $0,
                store: store,
                settings: settings,
                channels: channels,
                confirmations: confirmations,
                waiting: waiting,
                clock: clock,
                logger: logger
            )
        }
        self.confirmedEvents = PushChannelConfirmedEvents(clock: clock)
        self.bindings = PushChannelBindingRegistry(store: store, clock: clock, logger: logger)
        self.waiting = waiting
        self.store = store
        self.settings = settings
        self.clock = clock
        self.logger = logger
    }

    // MARK: Delivery from Home Assistant

    /// Delivers over a live channel, here or on another instance; over a provisional channel (a pair not bound yet)
    /// only when `toProvisional`. Returns the local message id, or nil (no channel, or the channel's pending limit is
    /// reached): then the caller takes the cloud route.
    package func deliver(_ n: HANotification, platform: HAPlatform, toProvisional: Bool) async -> String? {
        guard let sub = channels.subscription(for: n, provisional: toProvisional) else {
            guard let instances, instances.othersMayHoldChannels else { return nil }
            // Another instance's channel may be provisional: unless `toProvisional`, only a bound pair goes there, or a
            // webhook id an admin's channel token is for (a channel token's channel is never provisional).
            if !toProvisional {
                guard let webhookID = n.registrationInfo.webhookID,
                    channels.subscription(for: n, provisional: true) == nil
                else { return nil }
                if await bindings.verdict(pushToken: n.pushToken, webhookID: webhookID) != .bound {
                    guard await hasChannelToken(webhookID: webhookID) else { return nil }
                }
            }
            return await instances.deliver(n, platform: platform)
        }
        let now = clock.now()
        guard sub.supportConfirm else {
            // Fire and forget; a failed socket write falls back to the cloud route.
            confirmations.sendWithoutConfirm(n, platform: platform, on: sub)
            store.count(.delivered, token: n.pushToken, now: now)
            return RandomID.hex128()
        }
        var message = PushChannelMessage(n, platform: platform, state: .unconfirmed, fallback: sub.fallback, now: now, settings: settings)
        message.webhookID = sub.webhookID
        guard !sub.fallback else {
            guard confirmations.reserve(on: sub) else { return nil }
            await storeAndSend(message, n, on: sub)
            return message.id
        }
        // Without a fallback the message stays stored until the device confirms it: it goes under the bounds of every
        // message stored for a device (`LocalOnlyQueue`). Past them, or without a pending place, the cloud route.
        do {
            let result = try await waiting.admit(message) {
                guard confirmations.reserve(on: sub) else { throw NoPendingPlace() }
                await storeAndSend(message, n, on: sub)
            }
            guard case .queued = result else { return nil }
            return message.id
        } catch is NoPendingPlace {
            return nil
        } catch {
            logger.error("could not read the stored channel messages; taking the cloud route", metadata: ["error": .string("\(error)")])
            return nil
        }
    }

    /// The channel's pending places are all taken.
    private struct NoPendingPlace: Error {}

    /// Stores `message` and sends it on `sub`, whose pending place is reserved. Queues the durable copy first (a
    /// confirm's delete is then ordered after it), sends the event without waiting for the disk, and returns once the
    /// copy is committed.
    private func storeAndSend(_ message: PushChannelMessage, _ n: HANotification, on sub: PushChannelSubscription) async {
        let saved = store.enqueueSave(message, count: .delivered)
        confirmations.send(message, n, on: sub, reserved: true)
        do {
            try await saved.value
        } catch {
            logger.error("could not store a channel message; it is tracked in memory only", metadata: ["error": .string("\(error)")])
        }
    }

    // MARK: Events that wait for a confirm

    package func deliverConfirmed(_ event: [String: JSONValue], pushToken: String, webhookID: String?, timeout: Duration) async -> Bool {
        guard let sub = channels.subscription(pushToken: pushToken, webhookID: webhookID), sub.supportConfirm else { return false }
        // A channel opened with a channel token serves a webhook id, not a token: send there only when Home Assistant
        // has bound the push token to that webhook id (an API key holder cannot name someone else's).
        if sub.pushToken == nil, await bindings.verdict(pushToken: pushToken, webhookID: sub.webhookID) != .bound { return false }
        let confirmID = RandomID.hex128()
        var event = event
        event["hass_confirm_id"] = .string(confirmID)
        let text = PushChannelWire.event(subscription: sub.id, .object(event))
        return await confirmedEvents.deliver(text, id: confirmID, on: sub, timeout: timeout)
    }

    // MARK: Confirms

    /// A client confirmed a call invite or a message, sent here or handed here by another instance. False when the
    /// id is unknown, already timed out, or not this channel's.
    package func confirm(_ confirmID: String, webhookID: String, connection: PushChannelConnection) async -> Bool {
        if confirmedEvents.confirm(confirmID, webhookID: webhookID, connection: connection) { return true }
        if await confirmations.confirm(confirmID, webhookID: webhookID, connection: connection) { return true }
        return await instances?.confirm(confirmID, webhookID: webhookID, connection: connection) ?? false
    }

    /// Whether a live channel token is for `webhookID` (read only for a pair that is not bound, on its way to another
    /// instance; storage errors say no, and the notification takes the cloud route).
    private func hasChannelToken(webhookID: String) async -> Bool {
        do {
            return try await store.listTokens().contains { $0.webhookID == webhookID && $0.revokedAt == nil }
        } catch {
            logger.warning("could not read channel tokens; the notification takes the cloud route", metadata: ["error": .string("\(error)")])
            return false
        }
    }

    // MARK: Bindings

    /// Home Assistant had `n` accepted. With `.proof` its push token and webhook id are a pair now: when that changed a
    /// binding, every push-token channel that does not match the pair is closed (the old pair's, a provisional
    /// stranger's). With `.none` an identical bound pair is only kept fresh.
    package func observe(_ n: HANotification, evidence: PushChannelPairEvidence) async {
        guard let webhookID = n.registrationInfo.webhookID, !webhookID.isEmpty else { return }
        let binding = PushChannelBinding(pushToken: n.pushToken, webhookID: webhookID)
        guard evidence == .proof else {
            await bindings.refresh(binding)
            return
        }
        guard await bindings.observe(binding) != nil else { return }
        channels.paired(with: binding)
        await enforce(binding)
    }

    /// Closes the push-token channels that contradict `binding`. Their unconfirmed messages fall back (or stay
    /// queued) as on any disconnect.
    func enforce(_ binding: PushChannelBinding) async {
        let ended = channels.removeConflicting(with: binding)
        for sub in ended {
            logger.info(
                "closing a channel that Home Assistant's binding replaced",
                metadata: [
                    "channel": .string(PushChannelBinding(pushToken: sub.pushToken ?? "", webhookID: sub.webhookID).description),
                    "binding": .string(binding.description),
                ]
            )
            sub.connection.markClosed(.bindingReplaced)
        }
        await end(ended)
    }

    // MARK: Subscriptions

    /// Registers a subscription, replacing any channel for the same webhook id (or push token): the old channel's
    /// unconfirmed messages are re-sent here instead of going to the cloud. Then replays queued messages.
    ///
    /// A `provisional` subscription (a pair Home Assistant has not sent yet) never replaces a channel of another
    /// credential, and `stillAllowed` is asked again once it is registered: a binding committed meanwhile (whose
    /// enforcement may have run before the registration) removes it again. A paired subscription that finds the
    /// channel limits reached may evict the oldest provisional channel (`PushChannelAdmission`): that one's connection
    /// is closed, and its unconfirmed messages fall back (or stay queued) as on any disconnect.
    package func subscribe(
        _ sub: PushChannelSubscription,
        provisional: Bool = false,
        stillAllowed: () async -> Bool = { true },
        onRegistered: () -> Void
    ) async throws(PushChannelIndex.SubscribeError) {
        var evicted: [PushChannelSubscription] = []
        let old = try channels.register(sub, provisional: provisional) { evicted.append($0) }
        for victim in evicted {
            logger.info("closing a provisional channel to make room for a paired one", metadata: ["peer": .string(victim.connection.peer)])
            victim.connection.markClosed(.evicted)
        }
        await end(evicted)
        let replaced = old.map(confirmations.end) ?? []
        if provisional, !(await stillAllowed()) {
            channels.remove(sub)
            for message in replaced + confirmations.end(sub) { await confirmations.release(message) }
            throw .notBound
        }
        // Claimed before the device hears it is subscribed: from then on the other instances route to it.
        await instances?.claimPresence(sub)
        onRegistered()
        if !replaced.isEmpty {
            logger.info("channel replaced; re-sending its unconfirmed messages", metadata: ["count": .stringConvertible(replaced.count)])
        }
        await replay(to: sub)
    }

    /// Sends what is stored for this channel (queued, and unconfirmed ones no live channel holds).
    private func replay(to sub: PushChannelSubscription) async {
        let stored: [PushChannelMessage]
        do {
            stored = try await store.pending(webhookID: sub.webhookID, pushToken: sub.pushToken)
        } catch {
            logger.error("could not read queued channel messages", metadata: ["error": .string("\(error)")])
            return
        }
        for var message in stored where !confirmations.isPending(message.id) {
            guard let n = try? HANotification(body: message.notification), sub.accepts(n) || message.webhookID == sub.webhookID else { continue }
            if sub.supportConfirm {
                message.state = .unconfirmed
                message.fallback = message.fallback && sub.fallback
                try? await store.save(message)
                confirmations.send(message, n, on: sub, reserved: false)
            } else if sub.connection.send(sub.event(n, confirmID: nil)) {
                try? await store.remove(id: message.id, count: .delivered, token: message.pushToken, now: clock.now())
            }
        }
    }

    /// Ends one subscription (`unsubscribe_events`). Returns false when the id is not a live subscription of this connection.
    package func unsubscribe(connection: PushChannelConnection, subscriptionID: Int64) async -> Bool {
        guard let sub = channels.remove(connection: connection, subscriptionID: subscriptionID) else { return false }
        await end([sub])
        return true
    }

    /// The connection went away: every unconfirmed message of its channels falls back at once (or stays queued).
    func disconnected(_ connection: PushChannelConnection) async {
        await end(channels.removeAll(of: connection))
    }

    /// Channels that were removed: withdraw their presence and release their unconfirmed messages.
    private func end(_ subs: [PushChannelSubscription]) async {
        guard !subs.isEmpty else { return }
        await instances?.releasePresence(subs.map(\.webhookID))
        for sub in subs {
            for message in confirmations.end(sub) { await confirmations.release(message) }
        }
    }

    // MARK: Start

    /// At start: unconfirmed messages from before the restart fall back (or become queued); expired ones are dropped.
    /// With other instances on the database, only the messages of dead instances are settled.
    package func recover() async {
        do {
            let dropped = try await store.dropExpired(now: clock.now())
            if dropped > 0 { logger.info("dropped \(dropped) queued channel messages past channel.offline_ttl") }
            if let instances {
                await instances.settleOrphans()
                return
            }
            for m in try await store.all() where m.state == .unconfirmed {
                await confirmations.release(m)
            }
        } catch  where error.isShutdownNoise {
            logger.debug("channel recovery stopped by shutdown")
        } catch {
            logger.error("could not recover channel messages", metadata: ["error": .string("\(error)")])
        }
    }
}
