import Foundation
import Logging
import NIOCore
import PushRelayCore
import PushRelayStore
import Synchronization

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
    }

    let store: any LocalPushStorage
    let settings: LocalPushSettings
    let clock: any WallClock
    let logger: Logger
    private let state = Mutex(State())
    /// Where an unconfirmed message goes: its app's cloud route.
    let cloud: HomeAssistantCloudRoute
    /// Call invites waiting for their confirm (VoIP API).
    let callWaiters = CallInviteWaiters()
    /// Which push token may subscribe to which webhook id.
    let bindings: LocalPushBindingRegistry

    init(store: any LocalPushStorage, settings: LocalPushSettings, cloud: HomeAssistantCloudRoute, clock: any WallClock, logger: Logger) {
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
        guard let pending else { return false }
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
    private func release(_ message: LocalPushMessage) async {
        if message.fallback, let n = try? HANotification(body: message.notification) {
            do {
                try await store.remove(id: message.id, count: .fallbacks, token: message.pushToken, now: clock.now())
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
        let ended = state.withLock { s -> [Pending]? in
            guard let sub = s.byWebhook.values.first(where: { $0.connection === connection && $0.id == subscriptionID }) else { return nil }
            return Self.remove(sub, from: &s)
        }
        guard let ended else { return false }
        for p in ended {
            p.timer.cancel()
            await release(p.message)
        }
        return true
    }

    /// The connection went away: every unconfirmed message of its channels falls back at once (or stays queued).
    func disconnected(_ connection: LocalPushConnection) async {
        let ended = state.withLock { s -> [Pending] in
            s.byWebhook.values.filter { $0.connection === connection }.flatMap { Self.remove($0, from: &s) }
        }
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
    func recover() async {
        do {
            let dropped = try await store.dropExpired(now: clock.now())
            if dropped > 0 { logger.info("dropped \(dropped) queued channel messages past channel.offline_ttl") }
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
