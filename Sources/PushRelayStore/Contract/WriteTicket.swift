import PushRelayCore

/// A queued write's result, answered once the write is durable.
public final class WriteTicket<T: Sendable>: Sendable {
    private let state = Locked<(result: Result<T, any Error>?, waiters: [CheckedContinuation<T, any Error>])>((nil, []))

    /// An unanswered ticket; the engine that queued the write answers it with `complete`.
    public init() {}

    /// Answers the ticket (once, when the write is durable or failed). Later calls are ignored.
    public func complete(_ result: Result<T, any Error>) {
        let waiters = state.withLock { s -> [CheckedContinuation<T, any Error>] in
            if s.result != nil { return [] }
            s.result = result
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in waiters { w.resume(with: result) }
    }

    /// The write's result, after its commit.
    public var value: T {
        get async throws {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
                let ready = state.withLock { s -> Result<T, any Error>? in
                    if let r = s.result { return r }
                    s.waiters.append(c)
                    return nil
                }
                if let ready { c.resume(with: ready) }
            }
        }
    }
}
