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

    public init(
        id: Int64,
        appID: String,
        pushkey: String,
        eventID: String? = nil,
        notification: String,
        attempts: Int,
        nextAttemptAt: Date,
        createdAt: Date,
        lastError: String? = nil
    ) {
        self.id = id
        self.appID = appID
        self.pushkey = pushkey
        self.eventID = eventID
        self.notification = notification
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
        self.lastError = lastError
    }

}
