import GRDB

/// An error that means the database could not carry out a request (unreachable, full, read-only, closed, a statement
/// refused). Whatever route meets one answers 503 `StorageUnavailable` with `Retry-After`: the request was not carried
/// out, and a retry may succeed once the fault ends.
public protocol StorageFailure: Error {}

extension StoreError: StorageFailure {}
extension DatabaseError: StorageFailure {}
