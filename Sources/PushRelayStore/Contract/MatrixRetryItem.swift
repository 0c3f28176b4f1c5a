import Foundation

/// A device delivery waiting in the Matrix retry queue.
public struct MatrixRetryItem: Sendable, Equatable {
    public var id: Int64
    public var appID: String
    public var pushkey: String
    public var eventID: String?
    /// The Matrix notification JSON narrowed to this device.
    public var notification: String
    /// Attempts made so far.
    public var attempts: Int
    public var nextAttemptAt: Date
    public var createdAt: Date
    public var lastError: String?
}
