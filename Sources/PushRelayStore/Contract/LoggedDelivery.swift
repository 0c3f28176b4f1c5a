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

    /// A row as an engine reads it, column by column. Throws `StorageError.unreadableRow` for a value no build of
    /// PushRelay writes.
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
        guard let date = ISO8601UTC.date(at), let utcDay = UTCDay(string: day), let kindValue = DeliveryKind(rawValue: kind),
            let outcomeValue = DeliveryOutcomeClass(rawValue: outcome)
        else {
            throw .unreadableRow(table: "delivery_log", id: id)
        }
        return LoggedDelivery(
            id: id,
            at: date,
            day: utcDay,
            pushToken: pushToken,
            appID: appID,
            platform: platform.flatMap(DeliveryPlatform.init(rawValue:)),
            provider: provider,
            kind: kindValue,
            counted: counted,
            outcome: outcomeValue,
            messageID: messageID,
            errorMessage: errorMessage,
            payload: payload
        )
    }
}
