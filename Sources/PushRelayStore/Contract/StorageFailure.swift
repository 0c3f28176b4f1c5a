/// An error that means the database could not carry out a request (unreachable, full, read-only, closed, a statement
/// refused). Whatever route meets one answers 503 `StorageUnavailable` with `Retry-After`: the request was not carried
/// out, and a retry may succeed once the fault ends. `StorageError` and each engine's own error types conform.
public protocol StorageFailure: Error {
    /// Whether this only says that the storage was closed: the server is stopping, and the failure is not worth a
    /// warning.
    var meansClosed: Bool { get }
}

extension StorageFailure {
    public var meansClosed: Bool { false }
}
