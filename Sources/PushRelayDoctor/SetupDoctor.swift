import Foundation
import Logging
import PushRelayConfiguration
import PushRelayCore
import PushRelayEventLoopClock
import PushRelayProviders
import PushRelayStore

/// What `pushrelay doctor` checks, after the config has loaded: the storage (opened as the binary opens it for a
/// command that does not migrate, a write, the free disk of a SQLite file) and each configured provider against its
/// push service (`SelfChecking`), without delivering anything to a device.
public enum SetupDoctor {
    /// Below this much free space on a SQLite database's file system, the check fails.
    public static let minimumFreeBytes: Int64 = 1 << 30

    /// Every check of `config`; `openStorage` opens the configured storage (the binary's engine choice) with its
    /// schema checked, not migrated, and its errors are shown as they describe themselves.
    public static func run(
        _ config: PushRelayConfig,
        openStorage: @Sendable () async throws -> Storage,
        logger: Logger
    ) async -> [SetupCheck] {
        var checks = await storage(config, openStorage: openStorage)
        checks += await providers(config, logger: logger)
        return checks
    }

    /// The checks of a running server (the admin console's *Providers* page): its own storage engine probed with a
    /// write, the free disk of a SQLite file, and its provider instances checked as they are.
    public static func running(_ config: PushRelayConfig, engine: any StorageEngine, providers: [String: any PushProvider]) async -> [SetupCheck] {
        await writes(config, engine: engine) + (await check(providers))
    }

    /// A write probed on `engine`, and the free disk of a SQLite file.
    static func writes(_ config: PushRelayConfig, engine: any StorageEngine) async -> [SetupCheck] {
        let health = await engine.probe()
        var checks = [
            SetupCheck(
                subject: "storage",
                check: "a write",
                passed: health.isOK,
                detail: health.isOK ? "\(config.storage.location): committed" : (health.message ?? "failing"),
                remedy: health.isOK ? nil : "The database refuses writes: check the disk (df, dmesg) and the file's owner and permissions."
            )
        ]
        if config.storage.backend == .sqlite { checks.append(freeDisk(path: config.storage.sqlitePath)) }
        return checks
    }

    static func storage(_ config: PushRelayConfig, openStorage: @Sendable () async throws -> Storage) async -> [SetupCheck] {
        let location = config.storage.location
        if config.storage.backend == .sqlite, !FileManager.default.fileExists(atPath: config.storage.sqlitePath) {
            return [firstStart(sqlitePath: config.storage.sqlitePath, location: location)]
        }
        let storage: Storage
        do {
            storage = try await openStorage()
        } catch {
            return [
                SetupCheck(
                    subject: "storage",
                    check: "open",
                    passed: false,
                    detail: "\(location): \(error)",
                    remedy: config.storage.backend == .sqlite
                        ? "Point storage.sqlite_path (or PUSHRELAY_STORAGE_SQLITE_PATH, which wins) at the database serve uses, in a directory that exists and is writable by the user PushRelay runs as."
                        : "Check storage.postgres.url (host, port, user, password, database) and that PostgreSQL accepts connections from this machine."
                )
            ]
        }
        // The database's own version, which a newer PushRelay may have taken past this binary's.
        let version = (try? await storage.engine.appliedMigrations())?.map(\.version).max()
        let opened = SetupCheck(
            subject: "storage",
            check: "open",
            passed: true,
            detail: "\(location), schema version \(version.map(String.init) ?? "unknown")"
        )
        let checks = [opened] + (await writes(config, engine: storage.engine))
        try? await storage.engine.flushAndClose()
        return checks
    }

    /// A SQLite database that does not exist yet is not a fault before the first start: `serve` (or `migrate`) creates
    /// it, provided its directory exists and this user may write there. Nothing is created here.
    static func firstStart(sqlitePath: String, location: String) -> SetupCheck {
        let directory = URL(fileURLWithPath: sqlitePath).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) && isDirectory.boolValue
        guard exists, FileManager.default.isWritableFile(atPath: directory) else {
            return SetupCheck(
                subject: "storage",
                check: "open",
                passed: false,
                detail: "\(location) does not exist yet, and \(directory) \(exists ? "is not writable by this user" : "is not a directory")",
                remedy:
                    "Create \(directory), writable by the user PushRelay runs as, or point storage.sqlite_path (or PUSHRELAY_STORAGE_SQLITE_PATH, which wins) at a directory that is."
            )
        }
        return SetupCheck(
            subject: "storage",
            check: "open",
            passed: true,
            detail: "\(location) does not exist yet: 'pushrelay serve' creates it at its first start (\(directory) is writable)"
        )
    }

    /// The free space of the file system holding `path`, which fails below `minimum` bytes.
    static func freeDisk(path: String, minimum: Int64 = minimumFreeBytes) -> SetupCheck {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard let attributes = try? FileManager.default.attributesOfFileSystem(forPath: directory),
            let free = (attributes[.systemFreeSize] as? NSNumber)?.int64Value
        else {
            return SetupCheck(subject: "storage", check: "free disk", passed: false, detail: "cannot read the file system of \(directory)")
        }
        func gib(_ bytes: Int64) -> String { String(format: "%.1f GiB", Double(bytes) / Double(1 << 30)) }
        let enough = free >= minimum
        return SetupCheck(
            subject: "storage",
            check: "free disk",
            passed: enough,
            detail: "\(gib(free)) free in \(directory)" + (enough ? "" : ", less than the \(gib(minimum)) this check asks for"),
            remedy: enough
                ? nil
                : "Free space there or move storage.sqlite_path (or PUSHRELAY_STORAGE_SQLITE_PATH): a busy instance writes about 340 bytes per notification (docs/operations.md)."
        )
    }

    static func providers(_ config: PushRelayConfig, logger: Logger) async -> [SetupCheck] {
        let registry: ProviderRegistry
        switch await makeRegistry(config, subject: "providers", logger: logger) {
        case .success(let r): registry = r
        case .failure(let failed): return [failed.check]
        }
        let checks = await check(registry.providers)
        for provider in registry.providers.values { await provider.shutdown() }
        return checks
    }

    /// A provider that cannot be built, as a failed check.
    struct BuildFailure: Error {
        let check: SetupCheck
    }

    /// The configured providers, built as `serve` builds them; a failure is a check that names the problem.
    static func makeRegistry(_ config: PushRelayConfig, subject: String, logger: Logger) async -> Result<ProviderRegistry, BuildFailure> {
        do {
            return .success(try await ProviderRegistry.make(config, clock: EventLoopClock(), logger: logger))
        } catch {
            return .failure(
                BuildFailure(
                    check: SetupCheck(
                        subject: subject,
                        check: "build",
                        passed: false,
                        detail: "\(error)",
                        remedy: "Fix the provider's options as the message says."
                    )
                )
            )
        }
    }

    /// Each provider's own checks, by name.
    static func check(_ providers: [String: any PushProvider]) async -> [SetupCheck] {
        var checks: [SetupCheck] = []
        for (name, provider) in providers.sorted(by: { $0.key < $1.key }) {
            if let checking = provider as? any SelfChecking {
                checks += await checking.selfCheck()
            } else {
                checks.append(SetupCheck(subject: "providers.\(name)", check: "built", passed: true, detail: "no further checks for this type"))
            }
        }
        return checks
    }
}
