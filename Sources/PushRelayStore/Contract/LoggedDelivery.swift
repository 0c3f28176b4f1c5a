import Foundation
import PushRelayCore

/// One row of `delivery_log`, as typed as it was written (`DeliveryRecord`), with its id and day.
public struct LoggedDelivery: Sendable, Equatable {
    public var id: Int64
    public var at: Date
    public var day: UTCDay
    public var pushToken: String
    public var appID: String?
    public var platform: DeliveryPlatform?
    public var provider: String
    public var kind: DeliveryKind
    public var counted: Bool
    public var outcome: DeliveryOutcomeClass
    public var messageID: String?
    public var errorMessage: String?
    public var payload: String?

    public init(
        id: Int64,
        at: Date,
        day: UTCDay? = nil,
        pushToken: String,
        appID: String? = nil,
        platform: DeliveryPlatform? = nil,
        provider: String,
        kind: DeliveryKind,
        counted: Bool,
        outcome: DeliveryOutcomeClass,
        messageID: String? = nil,
        errorMessage: String? = nil,
        payload: String? = nil
    ) {
        self.id = id
        self.at = at
        self.day = day ?? UTCDay(at)
        self.pushToken = pushToken
        self.appID = appID
        self.platform = platform
        self.provider = provider
        self.kind = kind
        self.counted = counted
        self.outcome = outcome
        self.messageID = messageID
        self.errorMessage = errorMessage
        self.payload = payload
    }

    /// A row as an engine reads it, column by column. A value no build of PushRelay writes (an unknown kind, outcome
    /// or platform, a time that is not one) throws `StorageError.unreadableRow` naming its column and the value.
    public static func reading(
        id: Int64,
        at: String,
        day: String,
        pushToken: String,
        appID: String?,
        platform: String?,
        provider: String,
        kind: String,
        counted: Bool,
        outcome: String,
        messageID: String?,
        errorMessage: String?,
        payload: String?
    ) throws(StorageError) -> LoggedDelivery {
        let row = RowReading(table: "delivery_log", id: String(id))
        return LoggedDelivery(
            id: id,
            at: try row.column("at", at, ISO8601UTC.date),
            day: try row.column("day", day, UTCDay.init(string:)),
            pushToken: pushToken,
            appID: appID,
            platform: try platform.map { (raw) throws(StorageError) in try row.column("platform", raw, DeliveryPlatform.init(rawValue:)) },
            provider: provider,
            kind: try row.column("kind", kind, DeliveryKind.init(rawValue:)),
            counted: counted,
            outcome: try row.column("outcome", outcome, DeliveryOutcomeClass.init(rawValue:)),
            messageID: messageID,
            errorMessage: errorMessage,
            payload: payload
        )
    }
}
