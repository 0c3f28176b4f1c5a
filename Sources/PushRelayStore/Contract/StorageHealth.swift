import Foundation

/// What a storage engine knows of its own state: whether writes go through, and if not, since when and why.
///
/// `failing` starts with the first write that failed for a storage reason (disk full, read-only file system, I/O
/// error, lost connection) and ends with the next write that succeeds, whether a request's or a probe's. A request
/// refused by a rule (a constraint, a quota) is not a fault.
public struct StorageHealth: Sendable, Equatable {
    public enum State: String, Sendable {
        case ok
        case failing
    }

    public var state: State
    /// When the current fault was first seen (nil while `ok`).
    public var since: Date?
    /// What the engine reported for the latest failure, without statement arguments (nil while `ok`).
    public var message: String?

    public init(state: State, since: Date? = nil, message: String? = nil) {
        self.state = state
        self.since = since
        self.message = message
    }

    public static let ok = StorageHealth(state: .ok)

    public var isOK: Bool { state == .ok }
}
