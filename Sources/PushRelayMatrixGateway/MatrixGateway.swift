import Foundation
import Logging
import PushRelayCore
import PushRelayDelivery
import PushRelayHTTP
import PushRelayProviders
import PushRelayStore

/// The Matrix push gateway: routes each device of a notification to its app's provider, translates, delivers
/// concurrently through the shared provider instances, and decides the answer to the homeserver.
///
/// - A pushkey that can never work (unknown or ambiguous app, malformed subscription, a provider's "token is dead")
///   is answered in `rejected`.
/// - If every device failed transiently the answer is 502 and nothing is queued: the homeserver retries.
/// - Otherwise 200; transiently failed devices go to the durable retry queue (`MatrixRetryService`), except a device
///   whose request may have reached it (the answer was lost: `DeliveryFailure.mayHaveBeenDelivered`), which is not
///   sent again.
/// - Devices that already got the same `event_id` within `matrix.dedup_window` are not pushed again, and of identical
///   notifications arriving together only one pushes (`MatrixStorage.claim`). A device that was neither delivered nor
///   queued (the 502 above, a rejection, a permanent failure, nothing to send) does not count as sent: a repeat of the
///   event tries it again.
package final class MatrixGateway: Sendable {
    package let settings: MatrixGatewaySettings
    package let apps: MatrixAppTable<MatrixGatewaySettings.App>
    package let dispatcher: Dispatcher
    package let store: any MatrixStorage
    package let clock: any TimePort
    package let logger: Logger

    package init(
        settings: MatrixGatewaySettings,
        dispatcher: Dispatcher,
        store: any MatrixStorage,
        clock: any TimePort,
        logger: Logger
    ) {
        self.settings = settings
        self.apps = MatrixAppTable(settings.apps)
        self.dispatcher = dispatcher
        self.store = store
        self.clock = clock
        var logger = logger
        logger[metadataKey: "gateway"] = "matrix"
        self.logger = logger
    }

    /// What happened to one device.
    package enum DeviceOutcome: Sendable {
        case delivered
        /// Nothing to send (badge-only with nothing to say, `events_only`…), already sent (duplicate), or over its daily limit.
        case skipped(String)
        /// The pushkey goes into `rejected`.
        case rejected(reason: String, provider: String?)
        /// A permanent failure that is not the pushkey's fault (payload, configuration): logged, not retried.
        case failed(String)
        /// Worth retrying later.
        case transient(DeliveryFailure)
    }

    /// What the homeserver is told (`MatrixRoutes` writes it as HTTP).
    public enum Reply: Sendable, Equatable {
        /// Taken: these pushkeys are dead and the pusher should be removed; every other device was sent, skipped
        /// (already sent) or queued for a retry.
        case accepted(rejected: [String])
        /// Nothing could be sent or queued: the homeserver should send the whole notification again later. Why.
        case retryLater(String)
        /// The notification lists more than `matrix.max_devices` devices: nothing was sent. Why.
        case tooManyDevices(String)
    }

    /// The key the quota, the dead-token memory and the delivery log know a device by: `matrix:<pushkey>`, the pushkey in
    /// its canonical spelling (`MatrixFormat.canonicalPushkey`) whatever the app id, so that one device listed under
    /// several app ids (matching one `matrix.apps` glob, or several) has one daily limit and one dead-token mark.
    static func deviceKey(_ d: MatrixDevice) -> String { "matrix:\(d.pushkey)" }

    public func notify(_ received: MatrixNotification) async -> Reply {
        guard received.devices.count <= settings.maxDevices else {
            return .tooManyDevices(
                "The notification lists \(received.devices.count) devices; this gateway takes at most \(settings.maxDevices) per notification (matrix.max_devices). Nothing was sent."
            )
        }
        let (n, spellings) = canonical(received)
        let now = clock.now()
        let since = now.addingTimeInterval(-Double(settings.dedupWindowMs) / 1000)
        var seen: Set<String> = []
        var dead: Set<String> = []
        // The event is claimed for the pushkeys about to be sent: of identical notifications arriving together, only
        // the one holding a pushkey's claim pushes to it. The claim and the dead-token check are one storage trip.
        var claimed: Set<String> = []
        if let eventID = n.eventID, !n.devices.isEmpty {
            do {
                (claimed, dead) = try await store.claimUnlessDead(
                    eventID: eventID,
                    devices: n.devices.map { (pushkey: $0.pushkey, deadKey: Self.deviceKey($0)) },
                    since: since,
                    at: now
                )
                seen = Set(n.devices.lazy.filter { !dead.contains(Self.deviceKey($0)) }.map(\.pushkey)).subtracting(claimed)
            } catch {
                logger.error("claiming the event for de-duplication failed; sending without it", metadata: ["error": .string("\(error)")])
                (seen, dead) = await lookup(n, since: since, now: now)
            }
        } else {
            (seen, dead) = await lookup(n, since: since, now: now)
        }
        let outcomes: [DeviceOutcome]
        if n.devices.count == 1 {
            // One device (the common case): no child task.
            outcomes = [await outcome(n, device: n.devices[0], dead: dead, seen: seen)]
        } else {
            outcomes = await withTaskGroup(of: (Int, DeviceOutcome).self) { group in
                var out = [DeviceOutcome](repeating: .skipped(""), count: n.devices.count)
                for (i, device) in n.devices.enumerated() {
                    if dead.contains(Self.deviceKey(device)) || seen.contains(device.pushkey) {
                        out[i] = await outcome(n, device: device, dead: dead, seen: seen)
                    } else {
                        group.addTask { (i, await self.dispatch(n, device: device)) }
                    }
                }
                for await (i, o) in group { out[i] = o }
                return out
            }
        }

        let (reply, sent) = await settle(n, outcomes: outcomes, spellings: spellings)
        // A claim whose device was neither delivered nor queued is not a push: a repeat of the event pushes again.
        let unsent = claimed.subtracting(sent)
        if let eventID = n.eventID, !unsent.isEmpty {
            do {
                try await store.release(eventID: eventID, pushkeys: unsent.sorted(), claimedAt: now)
            } catch {
                logger.error(
                    "could not release de-duplication claims; a repeat of this event is not pushed to these devices within the window",
                    metadata: ["error": .string("\(error)"), "event_id": .string(eventID), "devices": .stringConvertible(unsent.count)]
                )
            }
        }
        return reply
    }

    /// `received` with each device listed once, under its canonical pushkey (`MatrixFormat.canonicalPushkey`), and
    /// for each canonical pushkey the spellings the homeserver sent, so that `rejected` names what it sent. A pushkey
    /// listed twice, or in two spellings of one device token, is pushed once.
    private func canonical(_ received: MatrixNotification) -> (MatrixNotification, spellings: [String: [String]]) {
        var n = received
        var devices: [MatrixDevice] = []
        devices.reserveCapacity(received.devices.count)
        var listed: Set<String> = []
        var spellings: [String: [String]] = [:]
        for var device in received.devices {
            let sent = device.pushkey
            if case .app(_, let app) = apps.match(device.appID) { device.pushkey = app.format.canonicalPushkey(sent) }
            if !(spellings[device.pushkey]?.contains(sent) ?? false) { spellings[device.pushkey, default: []].append(sent) }
            guard listed.insert(device.appID + "\u{0}" + device.pushkey).inserted else { continue }
            devices.append(device)
        }
        n.devices = devices
        return (n, spellings)
    }

    /// Which pushkeys of `n` already got its event since `since` and which devices are remembered as dead, without a
    /// claim (no event id, or the claim failed); nothing when the storage cannot say (the devices are then sent to).
    private func lookup(_ n: MatrixNotification, since: Date, now: Date) async -> (seen: Set<String>, dead: Set<String>) {
        guard !n.devices.isEmpty else { return ([], []) }
        do {
            return try await store.lookup(
                eventID: n.eventID,
                pushkeys: n.devices.map(\.pushkey),
                deadKeys: n.devices.map(Self.deviceKey),
                since: since,
                now: now
            )
        } catch {
            logger.error("reading the de-duplication window failed; sending without it", metadata: ["error": .string("\(error)")])
            return ([], [])
        }
    }

    /// One device's outcome: rejected when remembered dead, skipped when the event already went to its pushkey,
    /// otherwise dispatched.
    private func outcome(_ n: MatrixNotification, device: MatrixDevice, dead: Set<String>, seen: Set<String>) async -> DeviceOutcome {
        if dead.contains(Self.deviceKey(device)) {
            return .rejected(reason: "an earlier delivery found this pushkey dead", provider: nil)
        }
        if seen.contains(device.pushkey) {
            return .skipped("event \(n.eventID ?? "") was already sent to this pushkey")
        }
        return await dispatch(n, device: device)
    }

    /// The answer for `outcomes`, after queueing the transiently failed devices for a retry when that is the answer,
    /// and the pushkeys that count as sent (delivered, or queued: the retry queue delivers them).
    private func settle(_ n: MatrixNotification, outcomes: [DeviceOutcome], spellings: [String: [String]]) async -> (Reply, sent: Set<String>) {
        var rejected: [String] = []
        var sent: Set<String> = []
        var transient: [(MatrixDevice, DeliveryFailure)] = []
        for (device, outcome) in zip(n.devices, outcomes) {
            switch outcome {
            case .rejected:
                for pushkey in spellings[device.pushkey] ?? [device.pushkey] where !rejected.contains(pushkey) { rejected.append(pushkey) }
            case .delivered:
                sent.insert(device.pushkey)
            case .transient(let f):
                transient.append((device, f))
            case .skipped, .failed:
                break
            }
        }
        if !transient.isEmpty && transient.count == n.devices.count {
            let reasons = Set(transient.map { $0.1.message }).sorted().joined(separator: "; ")
            return (.retryLater("Every device failed transiently; retry later. (\(reasons))"), sent)
        }
        if !transient.isEmpty {
            let retryAfter = transient.compactMap { $0.1.retryAfterSeconds }.max()
            let at = clock.now()
            let next = at.addingTimeInterval(Double(settings.retry.delayMs(afterAttempts: 1, retryAfterSeconds: retryAfter)) / 1000)
            let items = transient.map { (d, f) in
                (appID: d.appID, pushkey: d.pushkey, eventID: n.eventID, notification: n.retryCopy(for: d).json.jsonString(), lastError: f.message)
            }
            do {
                let queued = try await store.queuedCount()
                guard queued + items.count <= settings.retry.maxQueued else {
                    logger.warning(
                        "the matrix retry queue is full (matrix.retry.max_queued); answering 502 so the homeserver retries",
                        metadata: ["queued": .stringConvertible(queued), "max_queued": .stringConvertible(settings.retry.maxQueued)]
                    )
                    return (.retryLater("Some devices failed transiently and the retry queue is full; retry later."), sent)
                }
                try await store.enqueue(items, attempts: 1, nextAttemptAt: next, now: at)
                logger.info(
                    "queued devices for retry",
                    metadata: ["devices": .stringConvertible(items.count), "event_id": .string(n.eventID ?? "-")]
                )
            } catch {
                logger.error("could not queue devices for retry; answering 502 so the homeserver retries", metadata: ["error": .string("\(error)")])
                return (.retryLater("Some devices failed transiently and could not be queued for a retry; retry later."), sent)
            }
            sent.formUnion(items.map(\.pushkey))
        }
        return (.accepted(rejected: rejected), sent)
    }

    /// Routes, translates and hands one device to the dispatcher (under the app's daily limit, if it has one). Used
    /// by requests and by the retry queue.
    package func dispatch(_ n: MatrixNotification, device: MatrixDevice) async -> DeviceOutcome {
        // For log lines only: made when one is written.
        var short: String { TokenDisplay.short(device.pushkey) }
        let app: MatrixGatewaySettings.App
        switch apps.match(device.appID) {
        case .app(_, let a):
            app = a
        case .noMatch:
            logger.notice(
                "no matrix.apps entry for this app id; rejecting the pushkey",
                metadata: ["app_id": .string(device.appID), "token": .string(short)]
            )
            return .rejected(reason: "no matrix.apps entry matches app id '\(device.appID)'", provider: nil)
        case .ambiguous(let keys):
            logger.warning(
                "several matrix.apps globs match this app id; rejecting the pushkey",
                metadata: ["app_id": .string(device.appID), "globs": .string(keys.joined(separator: ", "))]
            )
            return .rejected(reason: "app id '\(device.appID)' matches several matrix.apps globs (\(keys.joined(separator: ", ")))", provider: nil)
        }
        guard dispatcher.has(provider: app.provider) else {
            return .failed("provider '\(app.provider)' is not running")
        }
        let translated: TranslatedNotification
        let token: String
        switch app.format.translate(n, device: device) {
        case .send(let t, let tok):
            translated = t
            token = tok
        case .skip(let reason):
            logger.debug("nothing to send", metadata: ["token": .string(short), "reason": .string(reason)])
            return .skipped(reason)
        case .reject(let reason):
            logger.notice("rejecting pushkey", metadata: ["app_id": .string(device.appID), "token": .string(short), "reason": .string(reason)])
            return .rejected(reason: reason, provider: app.provider)
        case .tooLarge(let reason):
            logger.warning("notification too large for the provider; dropped", metadata: ["token": .string(short), "reason": .string(reason)])
            return .failed(reason)
        }

        let platform: HAPlatform
        if case .apns = app.format { platform = .ios } else { platform = .android }
        // The dead-token memory was read for the whole request (`notify`); only the daily limit is checked here.
        let quota: Dispatch.Quota = app.dailyLimit.map { .counted(QuotaPolicy(dailyLimit: $0)) } ?? .uncounted(checkDead: false)
        let dispatch = Dispatch(
            Delivery(platform: platform, pushToken: token, appID: device.appID, notification: translated),
            provider: app.provider,
            account: Self.deviceKey(device),
            logPlatform: .matrix(format: app.format.kind),
            quota: quota,
            client: ClientAddress.current
        )
        switch await dispatcher.dispatch(dispatch) {
        case .delivered:
            return .delivered
        case .refused(let r):
            logger.info("daily limit reached; not pushed", metadata: ["token": .string(short), "maximum": .stringConvertible(r.maximum)])
            return .skipped("daily limit of \(r.maximum) reached")
        case .dead(let dead, _):
            return .rejected(reason: dead.reason, provider: dead.provider)
        case .storageUnavailable:
            return .transient(.transient(reason: "StorageError", message: "the quota ledger could not be written", retryAfterSeconds: nil))
        case .storageBusy:
            return .transient(.transient(reason: "StorageBusy", message: "the quota ledger did not answer in time", retryAfterSeconds: 2))
        case .failed(let failure, _):
            switch failure {
            case .invalidToken(let reason, _): return .rejected(reason: reason, provider: app.provider)
            // A pushkey that cannot be a device token is rejected; a push service outside allowed_endpoints is
            // dropped without rejecting the pushkey, as Sygnal does (it is the gateway's policy, not the pushkey's fault),
            // and so is one that cannot be reached (it is neither queued for a retry nor counted by the breaker).
            case .invalidTarget(let reason, _) where reason != DeliveryFailure.endpointNotAllowed && !failure.isUnreachableDestination:
                return .rejected(reason: reason, provider: app.provider)
            // A request that may have reached the device is not queued for another send.
            case .transient where failure.mayHaveBeenDelivered: return .failed(failure.message)
            case .transient, .throttled: return .transient(failure)
            case .payloadTooLarge, .invalidPayload, .invalidTarget, .configuration: return .failed(failure.message)
            }
        }
    }
}
