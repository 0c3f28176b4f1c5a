/// Resumes one continuation with the first result offered to it; later offers are ignored. For racing work against
/// a deadline without waiting for the loser.
public final class FirstResult<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, Never>?
        var early: Value?
        var settled = false
        var onSettled: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())

    public init() {}

    /// The continuation to resume; an offer made before this call is delivered now.
    public func start(_ continuation: CheckedContinuation<Value, Never>) {
        let early: Value? = state.withLock { s in
            if let value = s.early {
                s.early = nil
                return value
            }
            s.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    /// Offers a result; returns whether it was the first.
    @discardableResult
    public func offer(_ value: Value) -> Bool {
        let (won, continuation, callbacks) = state.withLock { s -> (Bool, CheckedContinuation<Value, Never>?, [@Sendable () -> Void]) in
            guard !s.settled else { return (false, nil, []) }
            s.settled = true
            let c = s.continuation
            s.continuation = nil
            if c == nil { s.early = value }
            defer { s.onSettled = [] }
            return (true, c, s.onSettled)
        }
        continuation?.resume(returning: value)
        for callback in callbacks { callback() }
        return won
    }

    /// Runs `body` once a result was taken (at once if it was already).
    public func onSettled(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            if s.settled { return true }
            s.onSettled.append(body)
            return false
        }
        if now { body() }
    }
}
