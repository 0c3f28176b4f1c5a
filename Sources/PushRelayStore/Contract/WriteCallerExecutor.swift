/// Where a storage engine resumes a caller whose write is done. The server passes its event loops, so a request
/// continues on the thread that serves its connection, and one wakeup per thread serves a whole group commit; the
/// store itself knows nothing of the server's threads.
public protocol WriteCallerExecutor: AnyObject, Sendable {
    /// The executor the current thread belongs to, if any.
    typealias Lookup = @Sendable () -> (any WriteCallerExecutor)?

    /// Runs `work` on this executor.
    func execute(_ work: @escaping @Sendable () -> Void)
}
