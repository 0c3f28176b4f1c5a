import Foundation
import PushRelayCore

/// One row of `delivery_log`.
public struct LoggedDelivery: Sendable, Equatable, Codable {
    public var id: Int64
    public var at: String
    public var day: String
    public var pushToken: String
    public var appID: String?
    public var platform: String?
    public var provider: String
    public var kind: String
    public var counted: Bool
    public var outcome: String
    public var messageID: String?
    public var errorMessage: String?
    public var payload: String?

    public init(
        id: Int64,
        at: String,
        day: String,
        pushToken: String,
        appID: String? = nil,
        platform: String? = nil,
        provider: String,
        kind: String,
        counted: Bool,
        outcome: String,
        messageID: String? = nil,
        errorMessage: String? = nil,
        payload: String? = nil
    ) {
        self.id = id
        self.at = at
        self.day = day
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

}
