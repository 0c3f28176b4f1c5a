import Foundation

/// Runs blocking work (starting or stopping a PostgreSQL server: process waits, polling sleeps) on a thread of its own,
/// so that it never holds one of the few threads the concurrency pool has (two on a two-core machine).
public func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
        Thread { c.resume(with: Result { try work() }) }.start()
    }
}
