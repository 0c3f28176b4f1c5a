import PushRelayCore

/// Events sent over a push channel that wait for the app's confirm (`hass_confirm_id`): call invites
/// (`PushChannelPort.deliverConfirmed`).
///
/// In memory only: an event that is not confirmed within its timeout is the sender's to send another way, so nothing
/// needs to survive a restart. `PushChannelHub.confirm` asks here first. The timeout runs on the injected clock.
final class PushChannelConfirmedEvents: Sendable {
    private struct Waiter {
        let webhookID: String
        /// The connection itself, not its address: a later connection at the same address must not confirm.
        let connection: PushChannelConnection
        let continuation: CheckedContinuation<Bool, Never>
    }

    private let waiters = Locked<[String: Waiter]>([:])
    let clock: any TimePort

    init(clock: any TimePort) {
        self.clock = clock
    }

    var count: Int { waiters.withLock { $0.count } }

    /// Sends `event` (which carries `id` as its confirm id) on the subscription and waits for the confirm.
    /// True when confirmed in time; false on timeout or a failed write.
    func deliver(_ event: String, id: String, on sub: PushChannelSubscription, timeout: Duration) async -> Bool {
        let timer = Locked<ScheduledTimer?>(nil)
        let confirmed = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            waiters.withLock { $0[id] = Waiter(webhookID: sub.webhookID, connection: sub.connection, continuation: c) }
            // Started once the waiter is in place, so that a timeout always finds it.
            timer.withLock { $0 = clock.schedule(after: timeout) { [self] in self.resolve(id, confirmed: false) } }
            sub.connection.send(event) { [self] in self.resolve(id, confirmed: false) }
        }
        timer.withLock { $0 }?.cancel()
        return confirmed
    }

    /// A confirm from a client: true when it was for a waiting event sent on that connection.
    func confirm(_ id: String, webhookID: String, connection: PushChannelConnection) -> Bool {
        let waiter = waiters.withLock { w -> Waiter? in
            guard let x = w[id], x.webhookID == webhookID, x.connection === connection else { return nil }
            return w.removeValue(forKey: id)
        }
        waiter?.continuation.resume(returning: true)
        return waiter != nil
    }

    private func resolve(_ id: String, confirmed: Bool) {
        waiters.withLock { $0.removeValue(forKey: id) }?.continuation.resume(returning: confirmed)
    }
}
