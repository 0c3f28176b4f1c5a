import Foundation
import Logging
import PushRelayCore
import PushRelayDelivery
import PushRelayStore

/// Channel messages waiting for their confirm, and what becomes of a message that gets none: after
/// `channel.confirm_timeout_ms`, when its write fails, or when its channel ends, it goes to its app's cloud route
/// (counted as a fallback), or stays queued for the device when its channel asked for `fallback: false`.
///
/// Timers run on the injected clock (`TimePort`), and what they start runs on `BackgroundWork`, so that shutdown waits
/// for it and tests step through timeouts in simulated time.
package final class PushChannelConfirmations: Sendable {
    /// A message sent on a channel and not confirmed yet.
    struct Pending: Sendable {
        package let message: PushChannelMessage
        package let subscription: PushChannelSubscription
        package let timer: ScheduledTimer
    }

    private struct State {
        var pending: [String: Pending] = [:]
        var perChannel: [ObjectIdentifier: Int] = [:]
    }

    private let state = Locked(State())
    package let store: any PushChannelStorage
    package let settings: PushChannelSettings
    /// Where an unconfirmed message goes: its app's cloud route.
    package let fallback: any PushChannelFallback
    /// With other instances on the database, a message is settled by whoever removes its row first.
    package let sharedWithOtherInstances: Bool
    package let work: BackgroundWork
    package let clock: any TimePort
    package let logger: Logger

    package init(
        store: any PushChannelStorage,
        settings: PushChannelSettings,
        fallback: any PushChannelFallback,
        sharedWithOtherInstances: Bool,
        work: BackgroundWork,
        clock: any TimePort,
        logger: Logger
    ) {
        self.store = store
        self.settings = settings
        self.fallback = fallback
        self.sharedWithOtherInstances = sharedWithOtherInstances
        self.work = work
        self.clock = clock
        self.logger = logger
    }

    package var count: Int { state.withLock { $0.pending.count } }

    package var confirmTimeout: Duration { .milliseconds(settings.confirmTimeoutMs) }

    /// Takes one of the channel's `channel.max_pending` places. False when they are all taken or the channel ended:
    /// then the notification takes the cloud route.
    package func reserve(on sub: PushChannelSubscription) -> Bool {
        state.withLock { s in
            let key = ObjectIdentifier(sub)
            guard !sub.ended.load(ordering: .relaxed), s.perChannel[key, default: 0] < settings.maxPending else { return false }
            s.perChannel[key, default: 0] += 1
            return true
        }
    }

    /// Sends a stored message on a confirming channel and starts its confirm timer. `reserved`: a place was taken
    /// with `reserve(on:)`. A message for a channel that has ended meanwhile is released at once.
    package func send(_ message: PushChannelMessage, _ n: HANotification, on sub: PushChannelSubscription, reserved: Bool) {
        let timer = clock.schedule(after: confirmTimeout) { [self] in
            work.submit { await self.timedOut(message.id) }
        }
        let tracked = state.withLock { s -> Bool in
            if sub.ended.load(ordering: .relaxed) {
                if reserved { s.perChannel[ObjectIdentifier(sub), default: 1] -= 1 }
                return false
            }
            if !reserved { s.perChannel[ObjectIdentifier(sub), default: 0] += 1 }
            s.pending[message.id] = Pending(message: message, subscription: sub, timer: timer)
            return true
        }
        guard tracked else {
            timer.cancel()
            work.submit { await self.release(message) }
            return
        }
        // A write that fails is handled like a timeout, at once.
        sub.connection.send(sub.event(n, confirmID: message.id)) { [self] in
            work.submit { await self.timedOut(message.id) }
        }
    }

    /// Sends `n` without a confirm; a failed write sends it by the cloud route instead.
    func sendWithoutConfirm(_ n: HANotification, platform: HAPlatform, on sub: PushChannelSubscription) {
        sub.connection.send(sub.event(n, confirmID: nil)) { [self] in
            work.submit { await self.fallBack(n, platform: platform, reason: "socket write failed") }
        }
    }

    /// Whether message `id` is waiting for its confirm on a channel of this instance.
    func isPending(_ id: String) -> Bool {
        state.withLock { $0.pending[id] != nil }
    }

    /// A client confirmed a message. False when it is unknown, already timed out, or not this channel's.
    package func confirm(_ id: String, webhookID: String, connection: PushChannelConnection) async -> Bool {
        let pending = state.withLock { s -> Pending? in
            guard let p = s.pending[id], p.subscription.webhookID == webhookID, p.subscription.connection === connection else { return nil }
            s.pending[id] = nil
            s.perChannel[ObjectIdentifier(p.subscription), default: 1] -= 1
            return p
        }
        guard let pending else { return false }
        pending.timer.cancel()
        do {
            try await store.remove(id: id)
        } catch {
            logger.error("could not delete a confirmed channel message", metadata: ["error": .string("\(error)")])
        }
        return true
    }

    /// The channel ended (replaced, unsubscribed, disconnected, closed by a binding): nothing more is tracked on it,
    /// and its unconfirmed messages are returned with their timers stopped.
    package func end(_ sub: PushChannelSubscription) -> [PushChannelMessage] {
        let taken = state.withLock { s -> [Pending] in
            sub.ended.store(true, ordering: .relaxed)
            var taken: [Pending] = []
            for (id, p) in s.pending where p.subscription === sub {
                s.pending[id] = nil
                taken.append(p)
            }
            s.perChannel[ObjectIdentifier(sub)] = nil
            return taken
        }
        for p in taken { p.timer.cancel() }
        return taken.map(\.message)
    }

    /// No confirm in time (or the write failed): that message alone is released. The channel stays open.
    private func timedOut(_ id: String) async {
        let pending = state.withLock { s -> Pending? in
            guard let p = s.pending.removeValue(forKey: id) else { return nil }
            s.perChannel[ObjectIdentifier(p.subscription), default: 1] -= 1
            return p
        }
        guard let pending else { return }
        await release(pending.message)
    }

    /// A message leaves its channel unconfirmed: to the cloud route, or back to the queue.
    package func release(_ message: PushChannelMessage) async {
        if message.fallback, let n = try? HANotification(body: message.notification) {
            do {
                // With other instances, whoever removes the row settles the message (a confirm or another instance
                // may have got there first). Alone, a message whose row was never stored still falls back.
                let removed = try await store.remove(id: message.id, count: .fallbacks, token: message.pushToken, now: clock.now())
                if !removed && sharedWithOtherInstances { return }
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
        guard let problem = await fallback.fallBack(n, platform: platform) else { return }
        logger.warning(
            "cloud fallback of a channel message failed",
            metadata: ["token": .string(TokenDisplay.short(n.pushToken)), "outcome": .string(problem)]
        )
    }
}
