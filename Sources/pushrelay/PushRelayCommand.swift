import ArgumentParser
import Foundation
import Logging
import NIOCore
import PushRelayAdmin
import PushRelayConfiguration
import PushRelayCore
import PushRelayHTTP
import PushRelayServer
import PushRelayStore

struct ConfigOption: ParsableArguments {
    @Option(name: .long, help: "YAML config file (default: $PUSHRELAY_CONFIG, else the embedded defaults).")
    var config: String?

    /// The config, with what the storage engine can check without opening (a PostgreSQL URL) checked too.
    func load() throws -> PushRelayConfig {
        let env = ProcessInfo.processInfo.environment
        let file = config ?? env["PUSHRELAY_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            let config = try PushRelayConfig.load(file: file, environment: env)
            try StorageOpener.validate(config.storage)
            return config
        } catch let error as ConfigError {
            throw ValidationError(error.description)
        }
    }
}

struct PushRelay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushrelay",
        abstract: "A self-hosted push gateway for Home Assistant's mobile_app notify platform.",
        version: "\(PushRelayVersion.string) (commit \(BuildInfo.commit))",
        subcommands: [
            Serve.self, Migrate.self, CheckConfig.self, Quota.self, ChannelToken.self, APIKey.self, WebPushCommand.self, ImportSygnalConfig.self,
            MigrateData.self, Backup.self, Doctor.self,
        ],
        defaultSubcommand: nil
    )

    /// The entry point `main.swift` calls once the global executor is in place.
    static func start() async {
        await main()
    }
}

/// Sets up the process's logging (once): `format` on standard error at `level`, every line written while serving a
/// request carrying its id.
func makeLogger(_ level: Logger.Level, format: LogFormat = .text) -> Logger {
    LoggingSystem.bootstrap(
        { label, provider in format.standardErrorHandler(label: label, level: level, metadataProvider: provider) },
        metadataProvider: RequestID.metadataProvider
    )
    var logger = Logger(label: "pushrelay")
    logger.logLevel = level
    return logger
}

/// Opens the configured storage. Only `serve` and `migrate` change the schema (`.upgrade`, `.finish`); every other
/// command opens it with `.check`, which refuses a schema older than this binary in one line naming the command that
/// migrates. Its errors are one line each (a bad URL, a refused connection, wrong credentials, a schema this binary
/// cannot run on) and end the command with that line, without a stack trace.
func openStorage(_ config: PushRelayConfig, schema: SchemaStep = .check, logger: Logger = Logger(label: "pushrelay")) async throws -> Storage {
    do {
        return try await StorageOpener.open(config.storage, schema: schema, logger: logger)
    } catch {
        printError("cannot open the storage (\(StorageOpener.location(config.storage))): \(error)")
        throw ExitCode.failure
    }
}

/// One line on standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data("error: \(line)\n".utf8))
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the HTTP server (stops gracefully on SIGTERM/SIGINT).",
        discussion: """
            On SIGTERM or SIGINT, /ready answers 503 at once and the server goes on serving for http.drain_period, then \
            stops accepting, answers the requests in flight, closes the push channels (1012) and exits 0; a second \
            signal ends the drain early. Started by systemd with a socket unit (LISTEN_FDS), it accepts on the socket \
            systemd passed instead of binding http.host:http.port.
            """
    )
    @OptionGroup var options: ConfigOption

    func run() async throws {
        let config = try options.load()
        let logger = makeLogger(config.logLevel, format: config.logFormat)
        let passed: [Int32]
        do {
            passed = try SocketActivation.take()
        } catch {
            printError("socket activation: \(error)")
            throw ExitCode.failure
        }
        if passed.count > 1 {
            logger.warning("systemd passed \(passed.count) sockets; listening on the first (descriptor \(passed[0])) only")
        }
        let listen: ListenSocket = passed.first.map { .inherited(descriptor: $0) } ?? .address(host: config.http.host, port: config.http.port)
        let storage = try await openStorage(config, schema: .upgrade, logger: logger)
        let app = try await PushRelayApplication.build(config: config, storage: storage, listen: listen, logger: logger)
        logger.info("PushRelay \(PushRelayVersion.string) on \(listen), storage \(StorageOpener.location(config.storage))")
        do {
            try await app.runService()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            logger.critical(
                """
                cannot listen on \(config.http.host):\(config.http.port): the address is already in use \
                (another PushRelay or program is running there; choose another http.port or PUSHRELAY_HTTP_PORT)
                """
            )
            throw ExitCode.failure
        }
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply pending schema migrations to the configured database (SQLite or PostgreSQL).",
        discussion: """
            Without --finish, applies what 'serve' applies when it starts: the expand migrations, which instances of \
            older versions keep serving on, and the breaking ones (a migration file without a kind line), after which \
            instances of older versions refuse the database, so a release with one replaces every instance \
            together. With --finish, applies the contract migrations too (the ones that drop or rename what older \
            versions use); it refuses while an instance of an older version is alive on the database.
            """
    )
    @OptionGroup var options: ConfigOption
    @Flag(help: "Also apply the migrations older versions cannot run after, once every live instance is of this version.")
    var finish = false

    func run() async throws {
        let config = try options.load()
        let storage = try await openStorage(config, schema: finish ? .finish : .upgrade)
        let applied = try await storage.engine.appliedMigrations()
        print("\(StorageOpener.location(config.storage)) is at schema version \(applied.last?.version ?? 0)")
        for m in applied { print("  \(m.name)  applied \(m.appliedAt)") }
        try await storage.engine.flushAndClose()
    }
}

struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate the configuration and print the effective settings."
    )
    @OptionGroup var options: ConfigOption

    func run() async throws {
        let c = try options.load()
        print("configuration OK")
        print("  http: \(c.http.host):\(c.http.port), max body \(c.http.maxBodyBytes) bytes")
        print("  storage: \(StorageOpener.location(c.storage))")
        print(
            "  quota: \(c.quota.dailyLimit)/day, exempt commands \(c.quota.exemptCommands), exempt critical \(c.quota.exemptCritical), retention \(c.quota.retentionDays) days"
        )
        for (p, n) in c.quota.appLimits { print("    app \(p): \(n)/day") }
        for r in c.apps { print("  app \(r.match) -> provider \(r.provider) (\(c.providers[r.provider]?.type ?? "?"))") }
        print("  admin API: \(c.adminToken == nil ? "disabled (no admin.token)" : "enabled")")
        if c.usingDefaultApps { print("  note: no providers configured; everything goes to the sandbox and nothing leaves this machine") }
    }
}

struct Quota: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Inspect and manage per-token daily quotas.",
        subcommands: [List.self, Show.self, SetLimit.self, ClearLimit.self, Reset.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Usage per token for one UTC day, busiest first.")
        @OptionGroup var options: ConfigOption
        @Option(help: "UTC day as YYYY-MM-DD (default: today).") var day: String?
        @Option(help: "Show only the N busiest tokens.") var top: Int?
        @Flag(help: "Print JSON.") var json = false
        @Flag(help: "Show full push tokens.") var full = false

        func run() async throws {
            let config = try options.load()
            let d = try parseDay(day)
            if let top, top <= 0 { throw ValidationError("--top must be a positive number") }
            let storage = try await openStorage(config)
            let rows = try await storage.admin.list(day: d, top: top)
            print(
                json
                    ? QuotaReport.json(rows, policy: config.quotaPolicy, fullTokens: full)
                    : QuotaReport.table(rows, policy: config.quotaPolicy, fullTokens: full),
                terminator: ""
            )
            try await storage.engine.flushAndClose()
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A token's limit, today's counters and recent days.")
        @OptionGroup var options: ConfigOption
        @Argument(help: "The push token.") var token: String
        @Flag(help: "Print JSON.") var json = false
        @Flag(help: "Show the full push token.") var full = false

        func run() async throws {
            let config = try options.load()
            let storage = try await openStorage(config)
            let history = try await storage.admin.history(pushToken: token)
            let today = UTCDay(Date())
            let limits = try await storage.quota.rateLimits(pushToken: token, appID: nil, day: today, policy: config.quotaPolicy)
            if json {
                print(QuotaReport.json(history.rows, policy: config.quotaPolicy, fullTokens: full), terminator: "")
            } else {
                print("token:     \(full ? token : TokenDisplay.short(token))")
                print("limit:     \(limits.maximum)/day" + (history.limitOverride != nil ? " (override)" : ""))
                print(
                    "today:     \(limits.successful) successful, \(limits.errors) errors, \(limits.attempts) attempts, \(limits.remaining) remaining; resets \(limits.resetsAt)"
                )
                print(QuotaReport.table(history.rows, policy: config.quotaPolicy, fullTokens: full), terminator: "")
            }
            try await storage.engine.flushAndClose()
        }
    }

    struct SetLimit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set-limit", abstract: "Override the daily limit of one token.")
        @OptionGroup var options: ConfigOption
        @Argument(help: "The push token.") var token: String
        @Argument(help: "Successful deliveries allowed per UTC day.") var limit: Int

        func run() async throws {
            guard limit >= 0 else { throw ValidationError("the limit must be 0 or more") }
            let config = try options.load()
            let storage = try await openStorage(config)
            try await storage.admin.setLimit(pushToken: token, limit: limit)
            print("limit for \(TokenDisplay.short(token)) set to \(limit)/day")
            try await storage.engine.flushAndClose()
        }
    }

    struct ClearLimit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clear-limit", abstract: "Remove a token's limit override.")
        @OptionGroup var options: ConfigOption
        @Argument(help: "The push token.") var token: String

        func run() async throws {
            let config = try options.load()
            let storage = try await openStorage(config)
            let existed = try await storage.admin.clearLimit(pushToken: token)
            print(existed ? "limit override for \(TokenDisplay.short(token)) removed" : "no limit override was set for \(TokenDisplay.short(token))")
            try await storage.engine.flushAndClose()
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Clear a token's counters for a day (default: today).")
        @OptionGroup var options: ConfigOption
        @Argument(help: "The push token.") var token: String
        @Option(help: "UTC day as YYYY-MM-DD (default: today).") var day: String?

        func run() async throws {
            let config = try options.load()
            let d = try parseDay(day)
            let storage = try await openStorage(config)
            let existed = try await storage.admin.reset(pushToken: token, day: d)
            print(existed ? "counters for \(TokenDisplay.short(token)) on \(d) reset" : "no usage recorded for \(TokenDisplay.short(token)) on \(d)")
            try await storage.engine.flushAndClose()
        }
    }
}

func parseDay(_ s: String?) throws -> UTCDay {
    guard let s else { return UTCDay(Date()) }
    guard let d = UTCDay(string: s) else { throw ValidationError("--day must be a UTC date as YYYY-MM-DD, got '\(s)'") }
    return d
}

struct ChannelToken: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channel-token",
        abstract: "Manage push channel tokens (credentials bound to one webhook id).",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a token; it is printed once, as the last line, and stored hashed.")
        @OptionGroup var options: ConfigOption
        @Option(name: .customLong("webhook-id"), help: "The webhook id the token may subscribe to.") var webhookID: String
        @Option(help: "A note for `channel-token list`.") var label: String?

        func run() async throws {
            guard !webhookID.isEmpty else { throw ValidationError("--webhook-id must not be empty") }
            let storage = try await openStorage(try options.load())
            let (token, id) = try await storage.pushChannel.createToken(webhookID: webhookID, label: label, now: Date())
            print("channel token \(id) for webhook id \(webhookID) (shown only now; store it in the app):")
            print(token)
            try await storage.engine.flushAndClose()
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List channel tokens (never the tokens themselves).")
        @OptionGroup var options: ConfigOption

        func run() async throws {
            let storage = try await openStorage(try options.load())
            let tokens = try await storage.pushChannel.listTokens()
            if tokens.isEmpty { print("(no channel tokens)") }
            for t in tokens {
                print(
                    "\(t.id)  webhook \(t.webhookID)  created \(t.createdAt)" + (t.label.map { "  \"\($0)\"" } ?? "")
                        + (t.revokedAt.map { "  REVOKED \($0)" } ?? "")
                )
            }
            try await storage.engine.flushAndClose()
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a channel token by id (live connections keep their subscription until they reconnect)."
        )
        @OptionGroup var options: ConfigOption
        @Argument(help: "The token id from `channel-token list`.") var id: Int64

        func run() async throws {
            let storage = try await openStorage(try options.load())
            let revoked = try await storage.pushChannel.revokeToken(id: id, now: Date())
            print(revoked ? "channel token \(id) revoked" : "no live channel token with id \(id)")
            try await storage.engine.flushAndClose()
            if !revoked { throw ExitCode(1) }
        }
    }
}
