import PushRelayCore

/// Runs one delivery against one provider within the request's deadline: a timeout on each attempt, and retries of
/// transient failures with backoff and jitter, honouring `Retry-After`. Only what the provider did not process is sent
/// again: a request that was written and then lost its answer (`DeliveryFailure.mayHaveBeenDelivered`) is not. The `gate` bounds the dispatches in flight to
/// this provider; the `Dispatcher` takes a place in it (waiting for one, within the deadline) before it touches the
/// quota.
struct DeliveryRunner: Sendable {
    let provider: any PushProvider
    /// Where resends are counted (the provider's own figures, which its transport also writes).
    let figures: ProviderTransportFigures
    let gate: ProviderGate
    /// Nil when `delivery.breaker_cool_down` is 0.
    let breaker: CircuitBreaker?
    let retry: RetryPolicy
    let deadlineMs: Int
    /// Where the deadlines and the retry backoff wait (the dispatcher's clock).
    let clock: any TimePort

    /// `delivery.deadline_ms`: from the dispatch's start, its wait for a place included.
    var deadline: Duration { .milliseconds(deadlineMs) }

    /// Nil if a delivery may be sent now; otherwise the refusal (the provider's circuit is open).
    func admit() -> DeliveryFailure? { breaker?.admit() }

    /// Runs the delivery (`admit` said yes) until `deadline` (on `clock.instant`) at the latest, and reports its outcome to the circuit
    /// breaker.
    func run(_ delivery: Delivery, deadline: ContinuousClock.Instant) async -> Result<DeliveryReceipt, DeliveryFailure> {
        let result = await attempts(delivery, deadline: deadline)
        breaker?.record(result)
        return result
    }

    private func attempts(_ delivery: Delivery, deadline: ContinuousClock.Instant) async -> Result<DeliveryReceipt, DeliveryFailure> {
        var attempt = 1
        while true {
            let remaining = clock.instant.duration(to: deadline)
            let result = await attemptOnce(delivery, within: remaining)
            guard case .failure(let failure) = result, case .transient(let reason, let message, let retryAfter) = failure,
                !failure.mayHaveBeenDelivered
            else { return result }
            let remainingMs = Int(clock.instant.duration(to: deadline) / .milliseconds(1))
            guard
                let delay = retry.delayMs(
                    afterAttempt: attempt,
                    retryAfterSeconds: retryAfter,
                    remainingMs: remainingMs,
                    jitter: Double.random(in: 0..<1)
                )
            else {
                return .failure(
                    .transient(
                        reason: reason,
                        message:
                            "Provider '\(provider.name)' is unavailable (\(message)); gave up after \(attempt) attempt\(attempt == 1 ? "" : "s") within the \(deadlineMs) ms delivery deadline.",
                        retryAfterSeconds: retryAfter
                    )
                )
            }
            do {
                try await clock.sleep(for: .milliseconds(delay))
            } catch {
                return result
            }
            figures.resent(.providerRetry)
            attempt += 1
        }
    }

    /// One provider call, answered by the deadline whatever the provider does: at the deadline the call is cancelled
    /// and abandoned, not awaited. (A task group would wait for it, and a provider waiting on something that does not
    /// honour cancellation, such as a shared OAuth token fetch, would hold the answer past the deadline.)
    private func attemptOnce(_ delivery: Delivery, within remaining: Duration) async -> Result<DeliveryReceipt, DeliveryFailure> {
        let timeout = Result<DeliveryReceipt, DeliveryFailure>.failure(
            .transient(
                reason: "Timeout",
                message: "no answer from provider '\(provider.name)' before the delivery deadline",
                retryAfterSeconds: nil
            )
        )
        guard remaining > .zero else { return timeout }
        let provider = self.provider
        let first = FirstResult<Result<DeliveryReceipt, DeliveryFailure>>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                first.start(continuation)
                let send = Task {
                    let result: Result<DeliveryReceipt, DeliveryFailure>
                    do throws(DeliveryFailure) {
                        result = .success(try await provider.send(delivery))
                    } catch {
                        result = .failure(error)
                    }
                    first.offer(result)
                }
                // The deadline is an event-loop timer (cheap to set and to cancel, and most are cancelled); when it
                // fires, the timeout is offered from a task, so a send already queued for the same threads answers
                // first.
                let timer = clock.schedule(after: remaining) {
                    Task { if first.offer(timeout) { send.cancel() } }
                }
                first.onSettled { timer.cancel() }
            }
        } onCancel: {
            first.offer(timeout)
        }
    }
}
