import PushRelayCore

/// A device registered for call-invite pushes.
public struct CallDevice: Sendable, Equatable {
    public var id: String
    public var apiKeyID: Int64
    public var platform: HAPlatform
    public var appID: String
    public var pushToken: String
    public var voipToken: String?
    public var label: String?
    /// The webhook id of the device's push channel, if it has one.
    public var webhookID: String?
    /// The 32-byte AES-256-GCM key, shared with the app at registration.
    public var encryptionKey: [UInt8]

    public init(
        id: String,
        apiKeyID: Int64,
        platform: HAPlatform,
        appID: String,
        pushToken: String,
        voipToken: String?,
        label: String?,
        webhookID: String? = nil,
        encryptionKey: [UInt8]
    ) {
        self.id = id
        self.apiKeyID = apiKeyID
        self.platform = platform
        self.appID = appID
        self.pushToken = pushToken
        self.voipToken = voipToken
        self.label = label
        self.webhookID = webhookID
        self.encryptionKey = encryptionKey
    }

    /// A `call_devices` row as an engine reads it. A platform no build of PushRelay writes throws
    /// `StorageError.unreadableRow` naming the device, the column and the value: the device is never read as another
    /// platform.
    public static func reading(
        id: String,
        apiKeyID: Int64,
        platform: String,
        appID: String,
        pushToken: String,
        voipToken: String?,
        label: String?,
        webhookID: String?,
        encryptionKey: [UInt8]
    ) throws(StorageError) -> CallDevice {
        let row = RowReading(table: "call_devices", id: id)
        return CallDevice(
            id: id,
            apiKeyID: apiKeyID,
            platform: try row.column("platform", platform, HAPlatform.init(rawValue:)),
            appID: appID,
            pushToken: pushToken,
            voipToken: voipToken,
            label: label,
            webhookID: webhookID,
            encryptionKey: encryptionKey
        )
    }
}
