import PushRelayCore

/// A wait that outlived its limit: `within` gave up on it.
public struct WaitOutlivedItsLimit: Error, CustomStringConvertible {
    public var description: String
}

/// `body`'s result, or `WaitOutlivedItsLimit` once `limit` has passed, whether or not `body` heeds cancellation.
///
/// NIO's waits (`closeFuture.get()`, `NIOAsyncTestingChannel.waitForOutboundWrite`) ignore cancellation, so a suite's
/// `.timeLimit` cancels such a test but cannot end it: the run hangs instead of failing. Under `within` the test
/// fails at the limit, naming `what`; the abandoned wait is left to end with the process.
public func within<T: Sendable>(
    _ limit: Duration,
    _ what: String,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let pending = Locked<CheckedContinuation<T, any Error>?>(nil)
    let finish: @Sendable (Result<T, any Error>) -> Void = { result in
        pending.withLock { c in
            c?.resume(with: result)
            c = nil
        }
    }
    return try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
        pending.withLock { $0 = c }
        Task {
            do { finish(.success(try await body())) } catch { finish(.failure(error)) }
        }
        Task {
            try? await Task.sleep(for: limit)
            finish(.failure(WaitOutlivedItsLimit(description: "\(what): still waiting after \(limit)")))
        }
    }
}
