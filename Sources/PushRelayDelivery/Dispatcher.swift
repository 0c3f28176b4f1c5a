import Foundation
import Logging
import PushRelayCore
import PushRelayServerMetrics
import PushRelayStore

/// The one delivery pipeline every entry point uses: reserve quota → deliver → record → remember dead tokens → metrics.
///
/// Home Assistant, Matrix, the WebPush relay and calls translate their input into a `Dispatch` and turn the
/// `DispatchOutcome` into their own answer; none of them calls a provider, the quota or the delivery log directly.
/// Each provider instance has one `DeliveryRunner` (in-flight bound, deadline, retries) shared by every entry point.
package final class Dispatcher: Sendable {
    private let runners: [String: DeliveryRunner]
    private let quota: any QuotaLedger
    private let deliveries: any DeliveryLog
    private let deadTokenTTL: TimeInterval
    private let clock: any TimePort
    private let metrics: PushRelayMetrics?
    private let logger: Logger
    private let shedding: LoadShedReport

    package init(
        providers: [String: any PushProvider],
        quota: any QuotaLedger,
        deliveries: any DeliveryLog,
        settings: DispatcherSettings,
        clock: any TimePort,
        metrics: PushRelayMetrics?,
        logger: Logger
    ) {
        self.runners = providers.reduce(into: [:]) { runners, entry in
            let figures = entry.value.transportFigures ?? ProviderTransportFigures()
            metrics?.exportProviderCounters(provider: entry.key, transport: figures)
            runners[entry.key] = DeliveryRunner(
                provider: entry.value,
                figures: figures,
                gate: ProviderGate(limit: settings.maxInFlight, maxWait: settings.maxWait, clock: clock),
                breaker: settings.breaker.map {
                    CircuitBreaker(provider: entry.key, settings: $0, clock: clock, metrics: metrics, logger: logger)
                },
                retry: settings.retry,
                deadlineMs: settings.deadlineMs,
                clock: clock
            )
        }
        self.quota = quota
        self.deliveries = deliveries
        self.deadTokenTTL = settings.deadTokenTTL
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        self.shedding = LoadShedReport(metrics: metrics, clock: clock, logger: logger)
    }

    /// Whether `name` is a provider this dispatcher can send through.
    package func has(provider name: String) -> Bool { runners[name] != nil }

    private func shed(_ provider: String, _ runner: DeliveryRunner) -> DeliveryFailure {
        let gate = runner.gate
        shedding.shed(provider: provider, limit: gate.limit)
        return .transient(
            reason: "ProviderBusy",
            message:
                "Provider '\(provider)' had \(gate.limit) deliveries in flight for the whole \(Int(gate.maxWait / .milliseconds(1))) ms this notification could wait; nothing was sent or counted. Try again shortly.",
            retryAfterSeconds: 1
        )
    }

    /// Remembers `account` as dead for `delivery.dead_token_ttl`, as a provider's invalid-token answer does, for a
    /// rejection decided without a send (a Matrix pushkey a background retry found unusable), unless it is remembered
    /// already (the provider's own reason is kept). The pipeline's dead-token memory is the one every entry point reads.
    package func rememberDead(_ account: String, provider: String, reason: String, message: String) async throws {
        let now = clock.now()
        guard try await deliveries.deadToken(account, now: now) == nil else { return }
        try await deliveries.markDead(
            account,
            DeadMark(provider: provider, reason: reason, message: message, until: now.addingTimeInterval(deadTokenTTL)),
            now: now
        )
    }

    /// What the quota phase decided: go on to the provider (with the reservation of a counted dispatch), or answer.
    private enum QuotaStep: Sendable {
        case proceed(QuotaReservation?)
        case answer(DispatchOutcome)
    }

    /// Reserves quota (or checks the dead-token memory) within `budget`. Past it the dispatch is answered
    /// `.storageBusy`; a reservation that commits later is turned into an error at once, so it holds no slot.
    private func reserve(_ d: Dispatch, within budget: Duration) async -> QuotaStep {
        // Nothing to read or write: no storage to wait for.
        if case .uncounted(checkDead: false) = d.quota { return .proceed(nil) }
        let first = FirstResult<QuotaStep>()
        let timedOut = QuotaStep.answer(.storageBusy)
        return await withCheckedContinuation { continuation in
            first.start(continuation)
            let timer = clock.schedule(after: budget) {
                guard first.offer(timedOut) else { return }
                self.metrics?.recordStorageTimeout()
                self.logger.warning(
                    "quota storage did not answer within its share of the delivery deadline; answered 503 StorageBusy",
                    metadata: ["token": .string(TokenDisplay.short(d.account)), "waited_ms": .stringConvertible(budget / .milliseconds(1))]
                )
            }
            Task {
                let step = await self.quotaStep(d)
                timer.cancel()
                if !first.offer(step), case .proceed(let r?) = step { await self.release(r, d) }
            }
        }
    }

    private func quotaStep(_ d: Dispatch) async -> QuotaStep {
        let now = clock.now()
        do {
            switch d.quota {
            case .counted(let policy, let webhookID):
                switch try await quota.reserveUnlessDead(
                    pushToken: d.account,
                    appID: d.delivery.appID,
                    webhookID: webhookID,
                    day: UTCDay(now),
                    policy: policy,
                    now: now,
                    checkDead: true
                ) {
                case .dead(let dead, let limits):
                    return .answer(.dead(dead, rateLimits: limits))
                case .reserved(let r):
                    return r.decision.allowed ? .proceed(r) : .answer(.refused(r))
                }
            case .uncounted(checkDead: true):
                if let dead = try await deliveries.deadToken(d.account, now: now) { return .answer(.dead(dead, rateLimits: nil)) }
                return .proceed(nil)
            case .uncounted(checkDead: false):
                return .proceed(nil)
            }
        } catch {
            logger.error("quota storage failed", metadata: ["error": .string("\(error)")])
            return .answer(.storageUnavailable)
        }
    }

    /// A reservation that committed after its dispatch was answered `.storageBusy`: nothing was sent, so its slot
    /// becomes an error (as a failed delivery's does) and the log says why.
    private func release(_ reservation: QuotaReservation, _ d: Dispatch) async {
        let record = record(
            d,
            counted: true,
            outcome: .transient,
            errorMessage: "not sent: the quota reservation committed after the request was answered 503 StorageBusy"
        )
        do {
            _ = try await quota.complete(reservation, record: record, markDead: nil)
        } catch {
            logger.error("could not release a late quota reservation", metadata: ["error": .string("\(error)")])
        }
    }

    /// The delivery-log row of a dispatch, stamped now.
    private func record(
        _ d: Dispatch,
        counted: Bool,
        outcome: DeliveryOutcomeClass,
        messageID: String? = nil,
        errorMessage: String?,
        payload: String? = nil
    ) -> DeliveryRecord {
        DeliveryRecord(
            at: clock.now(),
            pushToken: d.account,
            appID: d.delivery.appID,
            platform: d.logPlatform,
            provider: d.provider,
            kind: d.delivery.kind,
            counted: counted,
            outcome: outcome,
            messageID: messageID,
            errorMessage: errorMessage,
            payload: payload
        )
    }

    /// The storage's share of what is left of the deadline: all but the half the provider keeps, or half of what is
    /// left when the wait for a place took more than the other half.
    package static func storageBudget(remaining: Duration, deadline: Duration) -> Duration {
        remaining > deadline / 2 ? remaining - deadline / 2 : remaining / 2
    }

    package func dispatch(_ d: Dispatch) async -> DispatchOutcome {
        guard let runner = runners[d.provider] else {
            return .failed(.configuration(message: "provider '\(d.provider)' is not running"), rateLimits: nil)
        }
        // The delivery deadline counts from here: the wait for a place is part of it.
        let deadline = clock.instant + runner.deadline
        // Past the bound the dispatch waits for a place; one refused after its wait costs no quota figure, no storage
        // write and no log line of its own.
        guard await runner.gate.acquire(client: d.client) else { return .failed(shed(d.provider, runner), rateLimits: nil) }
        defer { runner.gate.release() }
        if let refusal = runner.admit() { return .failed(refusal, rateLimits: nil) }
        // The storage's share of the deadline: a reservation that has not committed by then is answered as a storage
        // stall, never handed to the provider with too little time left (its timeout would count against the
        // provider's circuit).
        let reservation: QuotaReservation?
        switch await reserve(d, within: Self.storageBudget(remaining: clock.instant.duration(to: deadline), deadline: runner.deadline)) {
        case .proceed(let r): reservation = r
        case .answer(let outcome): return outcome
        }

        let started = clock.instant
        let outcome = await runner.run(d.delivery, deadline: deadline)
        metrics?.recordDelivery(provider: d.provider, outcome: DeliveryOutcomeClass(outcome).rawValue, duration: started.duration(to: clock.instant))
        let receipt = try? outcome.get()
        let record = record(
            d,
            counted: reservation != nil,
            outcome: DeliveryOutcomeClass(outcome),
            messageID: receipt?.messageID,
            errorMessage: outcome.failureMessage,
            payload: receipt?.logged.map(JSONWriter.string)
        )
        switch outcome {
        case .success(let receipt):
            // The reservation already counted it; the log row is committed with the next group commit.
            let logger = self.logger
            quota.recordDelivered(record, day: reservation?.day ?? UTCDay(record.at)) { error in
                logger.error("could not write the delivery log", metadata: ["error": .string("\(error)")])
            }
            return .delivered(receipt, rateLimits: reservation?.rateLimits)
        case .failure(let failure):
            var dead: DeadMark?
            if case .invalidToken(let reason, let message) = failure, failure.provesTokenDead {
                dead = DeadMark(provider: d.provider, reason: reason, message: message, until: record.at.addingTimeInterval(deadTokenTTL))
            }
            var limits = reservation?.rateLimits
            do {
                let counters = try await quota.complete(reservation, record: record, markDead: dead)
                if let r = reservation, let counters { limits = RateLimits(counters: counters, maximum: r.maximum, day: r.day) }
            } catch {
                // The failure is final already; a ledger write failure must not turn it into a retry.
                logger.error(
                    "could not record a delivery outcome",
                    metadata: [
                        "token": .string(TokenDisplay.short(d.account)), "error": .string("\(error)"),
                    ]
                )
            }
            logger.warning(
                "delivery failed",
                metadata: [
                    "token": .string(TokenDisplay.short(d.account)), "provider": .string(d.provider), "kind": .string(d.delivery.kind.rawValue),
                    "outcome": .string(DeliveryOutcomeClass(outcome).rawValue), "reason": .string(failure.message),
                ]
            )
            return .failed(failure, rateLimits: limits)
        }
    }
}

extension Result where Success == DeliveryReceipt, Failure == DeliveryFailure {
    var failureMessage: String? {
        if case .failure(let f) = self { return f.message }
        return nil
    }
}
