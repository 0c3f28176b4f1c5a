import Foundation
import PushRelayCore

/// A provider whose answers the test scripts, one per call (the last one repeats), recording every call.
package final class ScriptedProvider: PushProvider {
    package enum Step: Sendable {
        case deliver
        case fail(DeliveryFailure)
        case delay(milliseconds: Int, then: DeliveryFailure?)
        /// Waits until the test opens the gate, then delivers: for tests that must hold a call in flight
        /// for as long as they need, however slow the machine is.
        case hold(Gate)
    }

    /// A latch the test opens once; calls held on it finish after that (or when their task is cancelled).
    package final class Gate: Sendable {
        private struct State {
            var isOpen = false
            var nextID = 0
            var waiting: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        }

        private let state = Locked(State())
        package init() {}

        package func open() {
            let waiting = state.withLock { s in
                s.isOpen = true
                defer { s.waiting = [] }
                return s.waiting
            }
            for w in waiting { w.continuation.resume() }
        }

        /// Returns once the gate is open; throws `CancellationError` when the waiting task is cancelled first.
        package func wait() async throws {
            let id = state.withLock { s in
                s.nextID += 1
                return s.nextID
            }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                    enum Next { case go, cancelled, wait }
                    let next = state.withLock { s -> Next in
                        if s.isOpen { return .go }
                        if Task.isCancelled { return .cancelled }
                        s.waiting.append((id, c))
                        return .wait
                    }
                    switch next {
                    case .go: c.resume()
                    case .cancelled: c.resume(throwing: CancellationError())
                    case .wait: break
                    }
                }
            } onCancel: {
                let waiter = state.withLock { s -> CheckedContinuation<Void, any Error>? in
                    guard let i = s.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                    return s.waiting.remove(at: i).continuation
                }
                waiter?.resume(throwing: CancellationError())
            }
        }
    }

    package let name: String
    private let script: Locked<[Step]>
    private let calls = Locked<[Delivery]>([])
    private let finished = Locked(0)

    /// Calls that ran to their end (a delayed call cut off by the deadline never does).
    package var finishedCount: Int { finished.withLock { $0 } }

    package init(name: String, _ steps: [Step]) {
        self.name = name
        self.script = Locked(steps)
    }

    package var callCount: Int { calls.withLock { $0.count } }
    package var deliveries: [Delivery] { calls.withLock { $0 } }

    private static let cancelled = DeliveryFailure.transient(reason: "Cancelled", message: "cancelled", retryAfterSeconds: nil)

    package func send(_ delivery: Delivery) async throws(DeliveryFailure) -> DeliveryReceipt {
        let n = calls.withLock { c -> Int in
            c.append(delivery)
            return c.count
        }
        defer { if !Task.isCancelled { finished.withLock { $0 += 1 } } }
        let receipt = DeliveryReceipt(messageID: "\(name):msg-\(n)", sentPayload: delivery.notification.fcmMessage)
        let step = script.withLock { s -> Step in s.isEmpty ? .deliver : s[min(n - 1, s.count - 1)] }
        switch step {
        case .deliver:
            return receipt
        case .fail(let f):
            throw f
        case .delay(let ms, let then):
            do {
                try await Task.sleep(for: .milliseconds(ms))
            } catch {
                throw Self.cancelled
            }
            if let then { throw then }
            return receipt
        case .hold(let gate):
            do {
                try await gate.wait()
            } catch {
                throw Self.cancelled
            }
            return receipt
        }
    }
}
