import Logging
import PushRelayStore

extension Storage {
    /// The PostgreSQL implementation on an open engine (`PostgresStorageEngine.open`).
    public static func postgres(_ engine: PostgresStorageEngine) -> Storage {
        let devices = PostgresDeviceStore(engine: engine)
        return Storage(
            quota: PostgresQuotaLedger(engine: engine),
            deliveries: PostgresDeliveryLog(engine: engine),
            admin: PostgresQuotaAdministration(engine: engine),
            pushChannel: PostgresPushChannelStore(engine: engine),
            matrix: PostgresMatrixStore(engine: engine),
            devices: devices,
            apiKeys: devices,
            engine: engine,
            routing: PostgresPushChannelRouting(engine: engine)
        )
    }

    /// Opens PostgreSQL (checks the login, brings the schema to what `schema` asks of `migrations`, starts the pool)
    /// and returns its `Storage`. The pool runs until `storage.engine.flushAndClose()`.
    public static func postgres(
        _ configuration: PostgresStorageConfiguration,
        schema: SchemaStep = .upgrade,
        migrations: [Migration] = PostgresStorageEngine.migrations,
        logger: Logger = Logger(label: "pushrelay.postgres")
    ) async throws -> Storage {
        .postgres(try await PostgresStorageEngine.open(configuration, schema: schema, migrations: migrations, logger: logger))
    }
}
