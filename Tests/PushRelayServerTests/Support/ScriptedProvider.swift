import Foundation
import PushRelayCore

/// A provider whose answers the test scripts, one per call (the last one repeats), recording every call.
final class ScriptedProvider: PushProvider {
    enum Step: Sendable {
        case deliver
        case fail(DeliveryFailure)
        case delay(milliseconds: Int, then: DeliveryFailure?)
        /// Waits until the test opens the gate, then delivers: for tests that must hold a call in flight
        /// for as long as they need, however slow the machine is.
        case hold(Gate)
    }

    /// A latch the test opens once; calls held on it finish after that (or when their task is cancelled).
    final class Gate: Sendable {
        private let isOpen = Locked(false)
        init() {}
        func open() { isOpen.withLock { $0 = true } }
        func wait() async throws {
            while !isOpen.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        }
    }

    let name: String
    private let script: Locked<[Step]>
    private let calls = Locked<[Delivery]>([])
    private let finished = Locked(0)

    /// Calls that ran to their end (a delayed call cut off by the deadline never does).
    var finishedCount: Int { finished.withLock { $0 } }

    init(name: String, _ steps: [Step]) {
        self.name = name
        self.script = Locked(steps)
    }

    var callCount: Int { calls.withLock { $0.count } }
    var deliveries: [Delivery] { calls.withLock { $0 } }

    private static let cancelled = DeliveryFailure.transient(reason: "Cancelled", message: "cancelled", retryAfterSeconds: nil)

    func send(_ delivery: Delivery) async throws(DeliveryFailure) -> DeliveryReceipt {
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
