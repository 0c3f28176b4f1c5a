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
}
