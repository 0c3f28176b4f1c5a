/// One notification ready for a provider.
public struct Delivery: Sendable {
    public var platform: HAPlatform
    public var pushToken: String
    public var appID: String?
    public var notification: TranslatedNotification
    public var kind: DeliveryKind

    public init(platform: HAPlatform, pushToken: String, appID: String?, notification: TranslatedNotification, kind: DeliveryKind = .notification) {
        self.platform = platform
        self.pushToken = pushToken
        self.appID = appID
        self.notification = notification
        self.kind = kind
    }
}
