import Foundation
import Logging
import NIOCore
import PushRelayCore
import PushRelayStore

/// A live subscription: one connection's channel for one webhook id.
final class LocalPushSubscription: Sendable {
    let connection: LocalPushConnection
    /// The subscribe command's id: events carry it.
    let id: Int64
    let webhookID: String
    /// Set for push-token credentials: only notifications for this token are delivered here.
    let pushToken: String?
    let supportConfirm: Bool
    let fallback: Bool

    init(connection: LocalPushConnection, id: Int64, webhookID: String, pushToken: String?, supportConfirm: Bool, fallback: Bool) {
        self.connection = connection
        self.id = id
        self.webhookID = webhookID
        self.pushToken = pushToken
        self.supportConfirm = supportConfirm
        self.fallback = fallback
    }

    /// Whether a notification belongs on this channel.
    func accepts(_ n: HANotification) -> Bool {
        if let pushToken { return pushToken == n.pushToken }
        return n.registrationInfo.webhookID == webhookID
    }
}

/// The registry of live channels and of messages waiting for a confirm. Every rule about local delivery lives here:
/// local first, per-message confirm timeout with cloud fallback, replacement, `fallback: false` queueing, replay.
final class LocalPushHub: Sendable {
    private struct Pending: Sendable {
        let message: LocalPushMessage
        let subscription: LocalPushSubscription
        let timer: Scheduled<Void>
    }

    private struct State {
        var byWebhook: [String: LocalPushSubscription] = [:]
        var byToken: [String: LocalPushSubscription] = [:]
        var pending: [String: Pending] = [:]
        var pendingCount: [ObjectIdentifier: Int] = [:]
        /// Messages another instance handed to this one and sent here, waiting for their confirm (the timer runs on
        /// the instance that stored them), with when to forget them.
        var remote: [String: (subscription: LocalPushSubscription, forgetAt: Date)] = [:]
    }

    let store: any LocalPushStorage
    let settings: LocalPushSettings
    let clock: any WallClock
    let logger: Logger
    private let state = Locked(State())
    /// Where an unconfirmed message goes: its app's cloud route.
    let cloud: HomeAssistantCloudRoute
    /// Call invites waiting for their confirm (VoIP API).
    let callWaiters = CallInviteWaiters()
    /// Which push token may subscribe to which webhook id.
    let bindings: LocalPushBindingRegistry
    /// Channels held by other instances on the same database; nil when this is the only instance (SQLite).
    let routing: (any LocalPushRouting)?
    /// An instance whose heartbeat is older than this is dead to the others: nothing is routed to it and a live
    /// instance settles its unconfirmed messages. Heartbeats go every `heartbeatInterval`.
    static let instanceStaleAfter = Duration.seconds(3)
    static let heartbeatInterval = Duration.seconds(1)

    init(
        store: any LocalPushStorage,
        settings: LocalPushSettings,
        cloud: HomeAssistantCloudRoute,
        routing: (any LocalPushRouting)? = nil,
        clock: any WallClock,
        logger: Logger
    ) {
        self.routing = routing
        self.cloud = cloud
        self.bindings = LocalPushBindingRegistry(store: store, clock: clock, logger: logger)
        self.store = store
        self.settings = settings
        self.clock = clock
        self.logger = logger
    }

    var channelCount: Int { state.withLock { $0.byWebhook.count } }
    var pendingCount: Int { state.withLock { $0.pending.count } }

    // MARK: Delivery from Home Assistant

    /// Delivers over a live channel if the notification has one. Returns the local message id, or nil (no channel,
    /// or the channel's pending limit is reached): then the caller takes the cloud route.
    func deliver(_ n: HANotification, platform: HAPlatform) async -> String? {
        guard let sub = subscription(for: n) else { return nil }
        let now = clock.now()
        let id = RandomID.hex128()
        if sub.supportConfirm {
            let reserved = state.withLock { s -> Bool in
                let key = ObjectIdentifier(sub)
                guard s.pendingCount[key, default: 0] < settings.maxPending else { return false }
                s.pendingCount[key, default: 0] += 1
                return true
            }
            guard reserved else { return nil }
            let message = LocalPushMessage(
                id: id,
                webhookID: sub.webhookID,
                pushToken: n.pushToken,
                platform: platform,
                notification: n.requestBody,
                state: .unconfirmed,
                fallback: sub.fallback,
                createdAt: now,
                expiresAt: now.addingTimeInterval(Double(settings.offlineTTLms) / 1000)
            )
            // Queue the durable copy first (a confirm's delete is then ordered after it), send the event without
            // waiting for the disk, and answer Home Assistant once the copy is committed.
            let saved = store.enqueueSave(message, count: .delivered)
            sendConfirmable(message, n, on: sub, counted: true)
            do {
                try await saved.value
            } catch {
                logger.error("could not store a channel message; it is tracked in memory only", metadata: ["error": .string("\(error)")])
            }
            return id
        }
        // Fire and forget; a failed socket write falls back to the cloud route.
        let event = LocalPushWire.event(subscription: sub.id, LocalPushWire.notificationEvent(n, confirmID: nil))
        sub.connection.send(event) { [self] in
            Task { await self.fallBack(n, platform: platform, reason: "socket write failed") }
        }
        store.count(.delivered, token: n.pushToken, now: now)
        return id
    }

    /// Queues a notification for a local-only app whose device has no live channel.
    func queue(_ n: HANotification, platform: HAPlatform) async throws -> String {
        let now = clock.now()
        let id = RandomID.hex128()
        let message = LocalPushMessage(
            id: id,
            webhookID: n.registrationInfo.webhookID ?? "",
            pushToken: n.pushToken,
            platform: platform,
            notification: n.requestBody,
            state: .queued,
            fallback: false,
            createdAt: now,
            expiresAt: now.addingTimeInterval(Double(settings.offlineTTLms) / 1000)
        )
        try await store.save(message)
        return id
    }

    /// The live channel of a device registered for calls: by its push token, else by its webhook id.
    func subscription(pushToken: String, webhookID: String?) -> LocalPushSubscription? {
        state.withLock { s in
            if let sub = s.byToken[pushToken] { return sub }
            if let webhookID, let sub = s.byWebhook[webhookID], sub.pushToken == nil || sub.pushToken == pushToken { return sub }
            return nil
        }
    }

    private func subscription(for n: HANotification) -> LocalPushSubscription? {
        state.withLock { s in
            if let w = n.registrationInfo.webhookID, let sub = s.byWebhook[w], sub.accepts(n) { return sub }
            if let sub = s.byToken[n.pushToken], sub.accepts(n) { return sub }
            return nil
        }
    }

    /// Sends a stored message on a confirming channel and starts its confirm timer.
    private func sendConfirmable(_ message: LocalPushMessage, _ n: HANotification, on sub: LocalPushSubscription, counted: Bool) {
        let timer = LocalPushTimer.after(milliseconds: settings.confirmTimeoutMs) { [self] in
            Task { await self.confirmTimedOut(message.id) }
        }
        state.withLock { s in
            if !counted { s.pendingCount[ObjectIdentifier(sub), default: 0] += 1 }
            s.pending[message.id] = Pending(message: message, subscription: sub, timer: timer)
        }
        let event = LocalPushWire.event(subscription: sub.id, LocalPushWire.notificationEvent(n, confirmID: message.id))
        // A write that fails is handled like a timeout, at once.
        sub.connection.send(event) { [self] in
            Task { await self.confirmTimedOut(message.id) }
        }
    }

    // MARK: Confirms and timeouts

    /// A client confirmed a message. False when it is unknown, already timed out, or not this channel's.
    func confirm(_ confirmID: String, webhookID: String, connection: LocalPushConnection) async -> Bool {
        if callWaiters.confirm(confirmID, webhookID: webhookID, connection: connection) { return true }
        let pending = state.withLock { s -> Pending? in
            guard let p = s.pending[confirmID], p.subscription.webhookID == webhookID, p.subscription.connection === connection else { return nil }
            s.pending[confirmID] = nil
            s.pendingCount[ObjectIdentifier(p.subscription), default: 1] -= 1
            return p
        }
        guard let pending else { return await confirmRemote(confirmID, webhookID: webhookID, connection: connection) }
        pending.timer.cancel()
        do {
            try await store.remove(id: confirmID)
        } catch {
            logger.error("could not delete a confirmed channel message", metadata: ["error": .string("\(error)")])
        }
        return true
    }

    /// No confirm in time (or the write failed): that message alone goes to the cloud, or stays queued with
    /// `fallback: false`. The channel stays open.
    private func confirmTimedOut(_ id: String) async {
        let pending = state.withLock { s -> Pending? in
            guard let p = s.pending.removeValue(forKey: id) else { return nil }
            s.pendingCount[ObjectIdentifier(p.subscription), default: 1] -= 1
            return p
        }
        guard let pending else { return }
        await release(pending.message)
    }

    /// A message leaves the channel unconfirmed: cloud route, or back to the queue.
    func release(_ message: LocalPushMessage) async {
        if message.fallback, let n = try? HANotification(body: message.notification) {
            do {
                // With other instances, whoever removes the row settles the message (a confirm or another instance
                // may have got there first). Alone, a message whose row was never stored still falls back.
                let removed = try await store.remove(id: message.id, count: .fallbacks, token: message.pushToken, now: clock.now())
                if !removed && routing != nil { return }
            } catch {
                logger.error("could not update a channel message", metadata: ["error": .string("\(error)")])
            }
            await sendByCloud(n, platform: message.platform)
        } else {
            var queued = message
            queued.state = .queued
            try? await store.save(queued)
        }
    }

    private func fallBack(_ n: HANotification, platform: HAPlatform, reason: String) async {
        logger.info(
            "local delivery failed; using the cloud route",
            metadata: ["token": .string(TokenDisplay.short(n.pushToken)), "reason": .string(reason)]
        )
        store.count(.fallbacks, token: n.pushToken, now: clock.now())
        await sendByCloud(n, platform: platform)
    }

    private func sendByCloud(_ n: HANotification, platform: HAPlatform) async {
        let outcome = await cloud.send(n, platform: platform, localPush: self)
        guard !outcome.isAccepted else { return }
        logger.warning(
            "cloud fallback of a channel message failed",
            metadata: [
                "token": .string(TokenDisplay.short(n.pushToken)), "outcome": .string(outcome.summary),
            ]
        )
    }

    // MARK: Bindings

    /// Home Assistant had `n` accepted: its push token and webhook id are a pair now. When that changed a binding,
    /// every push-token channel that does not match the pair is closed (the old pair's, a provisional stranger's).
    func observe(_ n: HANotification) async {
        guard let webhookID = n.registrationInfo.webhookID, !webhookID.isEmpty else { return }
        let binding = LocalPushBinding(pushToken: n.pushToken, webhookID: webhookID)
        guard await bindings.observe(binding) != nil else { return }
        await enforce(binding)
    }

    /// Closes the push-token channels that contradict `binding`: the token on another webhook id, or another token
    /// on its webhook id. Their unconfirmed messages fall back (or stay queued) as on any disconnect.
    func enforce(_ binding: LocalPushBinding) async {
        // A push token holds at most one channel (a new subscription replaces its old one), so the two candidates
        // are found by key: the webhook id's channel and the token's.
        let ended = state.withLock { s -> [(LocalPushSubscription, [Pending])] in
            var conflicting: [LocalPushSubscription] = []
            if let sub = s.byWebhook[binding.webhookID], let token = sub.pushToken, token != binding.pushToken { conflicting.append(sub) }
            if let sub = s.byToken[binding.pushToken], sub.webhookID != binding.webhookID { conflicting.append(sub) }
            return conflicting.map { ($0, Self.remove($0, from: &s)) }
        }
        await releasePresence(ended.map(\.0.webhookID))
        for (sub, pending) in ended {
            logger.info(
                "closing a channel that Home Assistant's binding replaced",
                metadata: [
                    "channel": .string(LocalPushBinding(pushToken: sub.pushToken ?? "", webhookID: sub.webhookID).description),
                    "binding": .string(binding.description),
                ]
            )
            sub.connection.markClosed(.bindingReplaced)
            for p in pending {
                p.timer.cancel()
                await release(p.message)
            }
        }
    }

    // MARK: Subscriptions

    enum SubscribeError: Error {
        case tooManyChannels
        /// A provisional subscription met a channel of another credential, or its pair was bound meanwhile.
        case notBound
    }

    /// Registers a subscription, replacing any channel for the same webhook id (or push token): the old channel's
    /// unconfirmed messages are re-sent here instead of going to the cloud. Then replays queued messages.
    ///
    /// A `provisional` subscription (a pair Home Assistant has not sent yet) never replaces a channel of another
    /// credential, and `stillAllowed` is asked again once it is registered: a binding committed meanwhile (whose
    /// enforcement may have run before the registration) removes it again.
    func subscribe(
        _ sub: LocalPushSubscription,
        provisional: Bool = false,
        stillAllowed: () async -> Bool = { true },
        onRegistered: () -> Void
    ) async throws(SubscribeError) {
        let replaced = try state.withLock { s throws(SubscribeError) -> [Pending] in
            let old = s.byWebhook[sub.webhookID] ?? sub.pushToken.flatMap { s.byToken[$0] }
            if provisional, let old, old.pushToken == nil || old.pushToken != sub.pushToken { throw .notBound }
            if old == nil && s.byWebhook.count >= settings.maxChannels { throw .tooManyChannels }
            var taken: [Pending] = []
            if let old {
                s.byWebhook[old.webhookID] = nil
                if let t = old.pushToken, s.byToken[t] === old { s.byToken[t] = nil }
                for (id, p) in s.pending where p.subscription === old {
                    s.pending[id] = nil
                    taken.append(p)
                }
                s.pendingCount[ObjectIdentifier(old)] = nil
            }
            s.byWebhook[sub.webhookID] = sub
            if let t = sub.pushToken { s.byToken[t] = sub }
            return taken
        }
        if provisional, !(await stillAllowed()) {
            let ended = state.withLock { s in Self.remove(sub, from: &s) }
            for p in replaced + ended {
                p.timer.cancel()
                await release(p.message)
            }
            throw .notBound
        }
        onRegistered()
        await claimPresence(sub)
        for p in replaced { p.timer.cancel() }
        if !replaced.isEmpty {
            logger.info("channel replaced; re-sending its unconfirmed messages", metadata: ["count": .stringConvertible(replaced.count)])
        }
        await replay(to: sub)
    }

    /// Sends what is stored for this channel (queued, and unconfirmed ones no live channel holds).
    private func replay(to sub: LocalPushSubscription) async {
        let stored: [LocalPushMessage]
        do {
            stored = try await store.pending(webhookID: sub.webhookID, pushToken: sub.pushToken)
        } catch {
            logger.error("could not read queued channel messages", metadata: ["error": .string("\(error)")])
            return
        }
        let live = state.withLock { s in Set(s.pending.keys) }
        for var message in stored where !live.contains(message.id) {
            guard let n = try? HANotification(body: message.notification), sub.accepts(n) || message.webhookID == sub.webhookID else { continue }
            if sub.supportConfirm {
                message.state = .unconfirmed
                message.fallback = message.fallback && sub.fallback
                try? await store.save(message)
                sendConfirmable(message, n, on: sub, counted: false)
            } else {
                let event = LocalPushWire.event(subscription: sub.id, LocalPushWire.notificationEvent(n, confirmID: nil))
                if sub.connection.send(event) {
                    try? await store.remove(id: message.id, count: .delivered, token: message.pushToken, now: clock.now())
                }
            }
        }
    }

    /// Ends one subscription (`unsubscribe_events`). Returns false when the id is not a live subscription of this connection.
    func unsubscribe(connection: LocalPushConnection, subscriptionID: Int64) async -> Bool {
        let ended = state.withLock { s -> (pending: [Pending], webhookIDs: [String])? in
            guard let sub = s.byWebhook.values.first(where: { $0.connection === connection && $0.id == subscriptionID }) else { return nil }
            return (Self.remove(sub, from: &s), [sub.webhookID])
        }
        guard let ended else { return false }
        await releasePresence(ended.webhookIDs)
        for p in ended.pending {
            p.timer.cancel()
            await release(p.message)
        }
        return true
    }

    /// The connection went away: every unconfirmed message of its channels falls back at once (or stays queued).
    func disconnected(_ connection: LocalPushConnection) async {
        let (ended, webhookIDs) = state.withLock { s -> ([Pending], [String]) in
            let subs = s.byWebhook.values.filter { $0.connection === connection }
            return (subs.flatMap { Self.remove($0, from: &s) }, subs.map(\.webhookID))
        }
        await releasePresence(webhookIDs)
        for p in ended {
            p.timer.cancel()
            await release(p.message)
        }
    }

    private static func remove(_ sub: LocalPushSubscription, from s: inout State) -> [Pending] {
        if s.byWebhook[sub.webhookID] === sub { s.byWebhook[sub.webhookID] = nil }
        if let t = sub.pushToken, s.byToken[t] === sub { s.byToken[t] = nil }
        var ended: [Pending] = []
        for (id, p) in s.pending where p.subscription === sub {
            s.pending[id] = nil
            ended.append(p)
        }
        s.pendingCount[ObjectIdentifier(sub)] = nil
        return ended
    }

    // MARK: Start and housekeeping

    /// At start: unconfirmed messages from before the restart fall back (or become queued); expired ones are dropped.
    /// With other instances on the database, only the messages of dead instances are settled (`settleOrphans`).
    func recover() async {
        do {
            let dropped = try await store.dropExpired(now: clock.now())
            if dropped > 0 { logger.info("dropped \(dropped) queued channel messages past channel.offline_ttl") }
            if routing != nil {
                await settleOrphans()
                return
            }
            for m in try await store.all() where m.state == .unconfirmed {
                await release(m)
            }
        } catch  where error.isShutdownNoise {
            logger.debug("channel recovery stopped by shutdown")
        } catch {
            logger.error("could not recover channel messages", metadata: ["error": .string("\(error)")])
        }
    }
}

// MARK: - Other instances

extension LocalPushHub {
    /// Hands a notification to the instance that holds its device's channel, when another live instance does.
    /// The message is stored first (owned by this instance, whose timer settles it: confirmed there, or to the
    /// cloud after `channel.confirm_timeout_ms`). Returns the message id, or nil: then the caller takes the cloud
    /// route.
    func deliverRemotely(_ n: HANotification, platform: HAPlatform) async -> String? {
        guard let routing else { return nil }
        let holder: LocalPushHolder?
        do {
            holder = try await routing.holder(webhookID: n.registrationInfo.webhookID, pushToken: n.pushToken, staleAfter: Self.instanceStaleAfter)
        } catch {
            logger.warning("could not look up which instance holds a channel", metadata: ["error": .string("\(error)")])
            return nil
        }
        guard let holder else { return nil }
        let now = clock.now()
        let message = LocalPushMessage(
            id: RandomID.hex128(),
            webhookID: n.registrationInfo.webhookID ?? "",
            pushToken: n.pushToken,
            platform: platform,
            notification: n.requestBody,
            state: .unconfirmed,
            fallback: holder.fallback,
            createdAt: now,
            expiresAt: now.addingTimeInterval(Double(settings.offlineTTLms) / 1000)
        )
        do {
            try await store.save(message, count: .delivered)
        } catch {
            logger.warning("could not store a message for another instance's channel", metadata: ["error": .string("\(error)")])
            return nil
        }
        LocalPushTimer.after(milliseconds: settings.confirmTimeoutMs) { [self] in
            Task { await self.release(message) }
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
    /// Unconfirmed, it is settled by the instance that stored it.
    func receiveHandOff(_ id: String) async {
        guard let routing else { return }
        let message: LocalPushMessage?
        do {
            message = try await routing.message(id: id)
        } catch {
            logger.warning("could not read a handed-off channel message", metadata: ["error": .string("\(error)")])
            return
        }
        guard let message, message.state == .unconfirmed, let n = try? HANotification(body: message.notification) else { return }
        guard let sub = subscription(for: n) else { return }
        if sub.supportConfirm {
            let forgetAt = clock.now().addingTimeInterval(Double(settings.confirmTimeoutMs) / 1000 * 2)
            state.withLock { $0.remote[id] = (sub, forgetAt) }
            sub.connection.send(LocalPushWire.event(subscription: sub.id, LocalPushWire.notificationEvent(n, confirmID: id)))
        } else if sub.connection.send(LocalPushWire.event(subscription: sub.id, LocalPushWire.notificationEvent(n, confirmID: nil))) {
            try? await store.remove(id: id)
        }
    }

    /// A confirm for a message another instance handed here: true when this confirm removed it (before the other
    /// instance's timeout did).
    func confirmRemote(_ confirmID: String, webhookID: String, connection: LocalPushConnection) async -> Bool {
        guard routing != nil else { return false }
        let known = state.withLock { s -> Bool in
            guard let r = s.remote[confirmID], r.subscription.webhookID == webhookID, r.subscription.connection === connection else { return false }
            s.remote[confirmID] = nil
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
    func claimPresence(_ sub: LocalPushSubscription) async {
        guard let routing else { return }
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
    func releasePresence(_ webhookIDs: [String]) async {
        guard let routing, !webhookIDs.isEmpty else { return }
        let gone = state.withLock { s in webhookIDs.filter { s.byWebhook[$0] == nil } }
        for webhookID in gone {
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
        guard let routing else { return }
        let now = clock.now()
        state.withLock { s in s.remote = s.remote.filter { $0.value.forgetAt > now } }
        do {
            let orphans = try await routing.orphanedMessages(staleAfter: Self.instanceStaleAfter, limit: 500)
            if !orphans.isEmpty { logger.info("settling \(orphans.count) channel messages of instances that stopped") }
            for m in orphans { await release(m) }
            try await routing.forgetDeadInstances(staleAfter: Self.instanceStaleAfter)
        } catch  where error.isShutdownNoise {
        } catch {
            logger.warning("could not settle the channel messages of stopped instances", metadata: ["error": .string("\(error)")])
        }
    }

    /// With other instances: keeps this one's heartbeat, receives hand-offs and settles dead instances' messages,
    /// until cancelled.
    func runInstanceDuties() async {
        guard let routing else { return }
        try? await routing.heartbeat()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    do {
                        try await routing.heartbeat()
                    } catch  where error.isShutdownNoise {
                        return
                    } catch {
                        self.logger.warning("instance heartbeat failed", metadata: ["error": .string("\(error)")])
                    }
                    try? await Task.sleep(for: Self.heartbeatInterval)
                }
            }
            group.addTask {
                for await id in routing.handOffs() { await self.receiveHandOff(id) }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.instanceStaleAfter)
                    if Task.isCancelled { return }
                    await self.settleOrphans()
                }
            }
        }
    }
}
