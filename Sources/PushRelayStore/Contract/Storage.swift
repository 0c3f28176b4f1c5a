/// Everything PushRelay stores, as small protocols by concern. The server depends only on these; SQLite implements
/// them today (`Storage.sqlite`), and the contract test suite (`PushRelayStoreTests`) is what any engine must pass.
public struct Storage: Sendable {
    public var quota: any QuotaLedger
    public var deliveries: any DeliveryLog
    public var admin: any QuotaAdministration
    public var pushChannel: any PushChannelStorage
    public var matrix: any MatrixStorage
    public var devices: any CallDeviceStorage
    public var apiKeys: any APIKeyStorage
    public var engine: any StorageEngine
    /// Channels across instances; nil for an engine only one process uses (SQLite).
    public var routing: (any PushChannelRouting)?

    public init(
        quota: any QuotaLedger,
        deliveries: any DeliveryLog,
        admin: any QuotaAdministration,
        pushChannel: any PushChannelStorage,
        matrix: any MatrixStorage,
        devices: any CallDeviceStorage,
        apiKeys: any APIKeyStorage,
        engine: any StorageEngine,
        routing: (any PushChannelRouting)? = nil
    ) {
        self.quota = quota
        self.deliveries = deliveries
        self.admin = admin
        self.pushChannel = pushChannel
        self.matrix = matrix
        self.devices = devices
        self.apiKeys = apiKeys
        self.engine = engine
        self.routing = routing
    }
}
