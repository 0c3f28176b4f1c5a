// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6)
]

/// A test target that runs the server or its parts (`Tests/<name>`): the rig library and the test harness, which they
/// all use, and the modules its own files import besides (`scripts/check-imports` reads both).
func serverTests(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .testTarget(
        name: name,
        dependencies: ["PushRelayServerTestRig", "PushRelayTestHarness"] + dependencies,
        swiftSettings: swiftSettings
    )
}

let package = Package(
    name: "PushRelay",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pushrelay", targets: ["pushrelay"]),
        .executable(name: "pushrelay-dev", targets: ["pushrelay-dev"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // Pure logic: notification model, translations, quota rules, day maths. No I/O.
        .target(
            name: "PushRelayCore",
            dependencies: [],
            swiftSettings: swiftSettings
        ),
        // WebPush crypto: RFC 8291 aes128gcm encryption and VAPID (RFC 8292) JWTs. No I/O.
        .target(
            name: "PushRelayWebPush",
            dependencies: [
                "PushRelayCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The time port on NIO's event loops (`EventLoopClock`), and scheduling through any time port on a given event
        // loop: for what runs on event loops (the PostgreSQL engine, the provider clients, the server).
        .target(
            name: "PushRelayEventLoopClock",
            dependencies: [
                "PushRelayCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The storage contract: protocols by concern, engine-neutral types and errors, the schema plan. No engine, no I/O.
        .target(
            name: "PushRelayStore",
            dependencies: ["PushRelayCore"],
            swiftSettings: swiftSettings
        ),
        // The storage contract on one SQLite file (GRDB, group commit). No NIO.
        .target(
            name: "PushRelaySQLite",
            dependencies: [
                "PushRelayCore",
                "PushRelayStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedPlugin"]
        ),
        // The storage contract on PostgreSQL (postgres-nio's PostgresClient): several instances share one database.
        .target(
            name: "PushRelayPostgres",
            dependencies: [
                "PushRelayCore",
                "PushRelayEventLoopClock",
                "PushRelayStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedPlugin"]
        ),
        // Copying an install's data from one engine to the other (`pushrelay migrate-data`): the one place that sees
        // both engines' insides.
        .target(
            name: "PushRelayDataCopy",
            dependencies: [
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayPostgres",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Provider clients behind the PushProvider seam (sandbox, FCM, APNs).
        .target(
            name: "PushRelayProviders",
            dependencies: [
                "PushRelayCore",
                "PushRelayEventLoopClock",
                "PushRelayWebPush",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Strict in-process fakes of FCM and APNs (real TLS, HTTP/2), and the credentials they need.
        // Used by the tests, the benchmarks and `pushrelay-dev fake-providers`; never by the `pushrelay` binary.
        .target(
            name: "PushRelayTestSupport",
            dependencies: [
                "PushRelayCore",
                "PushRelayEventLoopClock",
                "PushRelayWebPush",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        // Stamps PushRelayServer with the git commit it is built from (`BuildInfo.commit`).
        .plugin(name: "BuildInfoPlugin", capability: .buildTool()),
        // Generates the Swift files that carry the migrations, the API contract and the console in the binary.
        .plugin(name: "EmbedPlugin", capability: .buildTool()),
        // The server's Prometheus metrics: the recorder every part of the server counts into (`PushRelayMetrics`) and
        // the router's `MetricsMiddleware`. It names nothing else of the server.
        .target(
            name: "PushRelayServerMetrics",
            dependencies: [
                "PushRelayCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings
        ),
        // The HTTP plumbing, naming no feature: the listener and its lifecycle, each connection's NIO pipeline, the route
        // table, APIError and JSONResponse, the notify fast path, the slow-client guard, /metrics, and the logging.
        .target(
            name: "PushRelayHTTP",
            dependencies: [
                "PushRelayCore",
                "PushRelayEventLoopClock",
                "PushRelayStore",
                "PushRelayServerMetrics",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The delivery pipeline every entry point calls (`Dispatcher`: the in-flight bound, the quota, the provider call
        // with its deadline and retries, the breaker, the log), and the work nobody awaits (`BackgroundWork`, pruning).
        .target(
            name: "PushRelayDelivery",
            dependencies: [
                "PushRelayCore",
                "PushRelayStore",
                "PushRelayServerMetrics",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The credential checks every entry point shares, naming no feature: constant-time secret comparison, the
        // failed-credential limiter per address, the per-device payload cipher and the request body limit.
        .target(
            name: "PushRelaySecurity",
            dependencies: [
                "PushRelayCore",
                "PushRelayHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The configuration: the YAML file and its environment overrides, read section by section into
        // `PushRelayConfig`, with each section's keys declared beside its reader. It names no feature's code.
        .target(
            name: "PushRelayConfiguration",
            dependencies: [
                "PushRelayPushChannel",
                "PushRelayWebPushRelay",
                "PushRelayCore",
                "PushRelayHTTP",
                "PushRelayProviders",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        // The Matrix push gateway (Sygnal's API): the gateway with its de-duplication and retry queue, and its routes.
        // It names no other entry point.
        .target(
            name: "PushRelayMatrixGateway",
            dependencies: [
                "PushRelayCore",
                "PushRelayDelivery",
                "PushRelayHTTP",
                "PushRelayProviders",
                "PushRelayStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The toot-relay compatible WebPush relay: its routes, the service, the per-sender limit and the line of
        // `Unsubscribe-URL` DELETEs. It names no other entry point.
        .target(
            name: "PushRelayWebPushRelay",
            dependencies: [
                "PushRelayCore",
                "PushRelayDelivery",
                "PushRelayHTTP",
                "PushRelayProviders",
                "PushRelayStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Home Assistant's websocket push channel: the hub (live channels, confirms and the fallback, other instances),
        // push-token and webhook-id bindings, the local-only queue, and the NIO transport with its state machines. It
        // names no entry point: Home Assistant and calls reach it through `PushChannelPort`.
        .target(
            name: "PushRelayPushChannel",
            dependencies: [
                "PushRelayCore",
                "PushRelayDelivery",
                "PushRelayEventLoopClock",
                "PushRelayHTTP",
                "PushRelaySecurity",
                "PushRelayServerMetrics",
                "PushRelayStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Home Assistant's notify: its routes (with the fast path's handler), request reader and answer renderer, who may
        // post, the service, the cloud sender, payload sealing. It names no other entry point.
        .target(
            name: "PushRelayHomeAssistant",
            dependencies: [
                "PushRelayCore",
                "PushRelayDelivery",
                "PushRelayHTTP",
                "PushRelayProviders",
                "PushRelayPushChannel",
                "PushRelaySecurity",
                "PushRelayStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Devices registered for calls and their call-invite pushes (per-device encrypted payloads, a live websocket
        // first), with their routes and answers. It names no other entry point.
        .target(
            name: "PushRelayCalls",
            dependencies: [
                "PushRelayCore",
                "PushRelayDelivery",
                "PushRelayHTTP",
                "PushRelayPushChannel",
                "PushRelaySecurity",
                "PushRelayStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The admin HTTP API (quotas, stats, the delivery log), its console (`console/`, embedded at build time) and the
        // quota reports. It names no entry point.
        // `pushrelay doctor`'s checks (`SetupDoctor`): the storage as the binary opens it, each provider against its
        // push service, a test delivery to a token; the admin console's Providers page runs them on a live server.
        .target(
            name: "PushRelayDoctor",
            dependencies: [
                "PushRelayConfiguration",
                "PushRelayCore",
                "PushRelayEventLoopClock",
                "PushRelayProviders",
                "PushRelayStore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PushRelayAdmin",
            dependencies: [
                "PushRelayCore",
                "PushRelayHTTP",
                "PushRelayPushChannel",
                "PushRelaySecurity",
                "PushRelayServerMetrics",
                "PushRelayStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedPlugin"]
        ),
        // HTTP server, config, services: on the storage contract, whichever engine the binary gives it.
        .target(
            name: "PushRelayServer",
            dependencies: [
                "PushRelayDoctor",
                "PushRelayCore",
                "PushRelayDelivery",
                "PushRelayHTTP",
                "PushRelaySecurity",
                "PushRelayConfiguration",
                "PushRelayMatrixGateway",
                "PushRelayWebPushRelay",
                "PushRelayPushChannel",
                "PushRelayHomeAssistant",
                "PushRelayCalls",
                "PushRelayAdmin",
                "PushRelayServerMetrics",
                "PushRelayEventLoopClock",
                "PushRelayStore",
                "PushRelayProviders",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["BuildInfoPlugin", "EmbedPlugin"]
        ),
        // The parsers that read strangers' bytes, as fuzz targets (`scripts/fuzz`, `FuzzCorpusTests`).
        .target(
            name: "PushRelayFuzzing",
            dependencies: [
                "PushRelayCore",
                "PushRelayPushChannel",
                "PushRelayConfiguration",
                "PushRelayWebPush",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "pushrelay",
            dependencies: [
                "PushRelayDoctor",
                "PushRelayAdmin",
                "PushRelayServer",
                "PushRelayConfiguration",
                "PushRelayHTTP",
                "PushRelayCore",
                "PushRelayEventLoopClock",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayPostgres",
                "PushRelayDataCopy",
                "PushRelayWebPush",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Development helpers built from the test fakes (`pushrelay-dev fake-providers`); the release binary does not
        // link them.
        .executableTarget(
            name: "pushrelay-dev",
            dependencies: [
                "PushRelayCore",
                "PushRelayEventLoopClock",
                "PushRelayProviders",
                "PushRelayTestSupport",
                "PushRelayWebPush",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // What several test targets share: child processes, the throwaway PostgreSQL server (one per test process) and
        // a fresh database per test, a SQLite file read with plain SQL, waiting for a condition with a deadline,
        // temporary paths, the repository's root.
        .target(
            name: "PushRelayTestHarness",
            dependencies: [
                "PushRelayCore",
                "PushRelayStore",
                "PushRelayPostgres",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/PushRelayTestHarness",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PushRelayCoreTests",
            dependencies: ["PushRelayCore"],
            resources: [.copy("Golden"), .copy("MatrixGolden")],
            swiftSettings: swiftSettings
        ),
        // The configuration reader's tests: each section's keys, defaults and refusals, without a server.
        .testTarget(
            name: "PushRelayConfigurationTests",
            dependencies: [
                "PushRelayConfiguration",
                "PushRelayWebPushRelay",
                "PushRelayCore",
                "PushRelayProviders",
                "PushRelayTestHarness",
            ],
            swiftSettings: swiftSettings
        ),
        // The storage contract suite: every engine must pass it.
        .testTarget(
            name: "PushRelayStoreTests",
            dependencies: [
                "PushRelayCore",
                "PushRelayEventLoopClock",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayPostgres",
                "PushRelayTestHarness",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // What is SQLite's own: group commit, WAL, migrations, the writer's cache, the file's mode.
        .testTarget(
            name: "PushRelaySQLiteTests",
            dependencies: [
                "PushRelayCore",
                "PushRelayEventLoopClock",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayTestHarness",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PushRelayPostgresTests",
            dependencies: [
                "PushRelayCore",
                "PushRelayEventLoopClock",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayPostgres",
                "PushRelayTestHarness",
                "PushRelayTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The time port on the event loops, and the manual one the tests step.
        .testTarget(
            name: "PushRelayEventLoopClockTests",
            dependencies: [
                "PushRelayCore",
                "PushRelayEventLoopClock",
                "PushRelayTestSupport",
                "PushRelayTestHarness",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PushRelayWebPushTests",
            dependencies: [
                "PushRelayCore",
                "PushRelayWebPush",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PushRelayProviderTests",
            dependencies: [
                "PushRelayCore",
                "PushRelayProviders",
                "PushRelayWebPush",
                "PushRelayTestSupport",
                "PushRelayEventLoopClock",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // What the server tests share: a server in process (`TestServer`) or as a process (`ServerProcess`), raw HTTP
        // and websocket clients, the provider fakes and front ends wired to a server, load helpers, log capture.
        .target(
            name: "PushRelayServerTestRig",
            dependencies: [
                "PushRelayHomeAssistant",
                "PushRelayWebPush",
                .product(name: "Crypto", package: "swift-crypto"),
                "PushRelayServer",
                "PushRelayPushChannel",
                "PushRelayHTTP",
                "PushRelayDelivery",
                "PushRelayConfiguration",
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayTestSupport",
                "PushRelayTestHarness",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/PushRelayServerTestRig",
            swiftSettings: swiftSettings
        ),
        // The push channel's tests: its state machines and handlers without sockets, and the channel over real websockets.
        serverTests(
            "PushRelayPushChannelTests",
            [
                "PushRelayHomeAssistant",
                "PushRelayServer",
                "PushRelayDelivery",
                "PushRelayConfiguration",
                "PushRelayPushChannel",
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayTestSupport",
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        // The HTTP plumbing's tests: the listener, the fast path and the slow-client guard (handlers and state machines with EmbeddedChannel, and on a whole server), the logging.
        serverTests(
            "PushRelayHTTPTests",
            [
                "PushRelayHomeAssistant",
                "PushRelayServer",
                "PushRelayHTTP",
                "PushRelayDelivery",
                "PushRelayConfiguration",
                "PushRelayMatrixGateway",
                "PushRelayPushChannel",
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayTestSupport",
                "PushRelayEventLoopClock",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The delivery pipeline's tests: the dispatcher, its gate, breaker and deadlines, and the background work, with scripted providers and on a whole server.
        serverTests(
            "PushRelayDeliveryTests",
            [
                "PushRelayServer",
                "PushRelayDelivery",
                "PushRelayConfiguration",
                "PushRelayServerMetrics",
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayProviders",
                "PushRelayTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The credential checks' tests, and the threat table's attacks on a whole server (hostile callers, fuzzing, strangers' budgets).
        serverTests(
            "PushRelaySecurityTests",
            [
                "PushRelayAdmin",
                "PushRelayServer",
                "PushRelayHTTP",
                "PushRelaySecurity",
                "PushRelayConfiguration",
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayTestSupport",
                "PushRelayEventLoopClock",
                "PushRelayFuzzing",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The Matrix gateway's tests: the gateway on real storage, and its settings.
        serverTests(
            "PushRelayMatrixGatewayTests",
            [
                "PushRelayServer",
                "PushRelayConfiguration",
                "PushRelayMatrixGateway",
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayTestSupport",
                "PushRelayWebPush",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The WebPush relay's tests: the service with a scripted provider, the per-sender limit, the unsubscribe line, pywebpush end to end.
        serverTests(
            "PushRelayWebPushRelayTests",
            [
                "PushRelayServer",
                "PushRelayDelivery",
                "PushRelayConfiguration",
                "PushRelayWebPushRelay",
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Home Assistant's notify tests: the service with a scripted provider, its routes and answers on a whole server, who may post.
        serverTests(
            "PushRelayHomeAssistantTests",
            [
                "PushRelayHomeAssistant",
                "PushRelayServer",
                "PushRelaySecurity",
                "PushRelayConfiguration",
                "PushRelayPushChannel",
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The calls API's tests: the service with real storage, its routes and answers end to end, what an API-key holder can do.
        serverTests(
            "PushRelayCallsTests",
            [
                "PushRelayCalls",
                "PushRelayServer",
                "PushRelaySecurity",
                "PushRelayPushChannel",
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The admin API's tests: quotas, stats and the delivery log over HTTP, the console's API and embedded files.
        serverTests(
            "PushRelayAdminTests",
            [
                "PushRelayAdmin",
                "PushRelayServer",
                "PushRelayConfiguration",
                "PushRelayCore",
                "PushRelayStore",
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The setup doctor's checks against the strict fakes over real TLS and HTTP/2, and on a SQLite file.
        serverTests(
            "PushRelayDoctorTests",
            [
                "PushRelayDoctor",
                "PushRelayConfiguration",
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Whole processes: the real pushrelay binary (its commands, serve under systemd's socket, signals, crashes, restarts), several instances on one PostgreSQL database, rolling upgrades and migrate-data.
        serverTests(
            "PushRelaySystemTests",
            [
                "PushRelayServer",
                "PushRelayHTTP",
                "PushRelayConfiguration",
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                "PushRelayPostgres",
                "PushRelayTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        serverTests(
            "PushRelayServerTests",
            [
                "PushRelayServer",
                "PushRelayHTTP",
                "PushRelayDelivery",
                "PushRelaySecurity",
                "PushRelayConfiguration",
                "PushRelayMatrixGateway",
                "PushRelayWebPushRelay",
                "PushRelayPushChannel",
                "PushRelayHomeAssistant",
                "PushRelayCalls",
                "PushRelayAdmin",
                "PushRelayServerMetrics",
                "PushRelayCore",
                "PushRelayStore",
                "PushRelaySQLite",
                // The server tests that run it on PostgreSQL (Storage.postgres) and the providers' transport.
                "PushRelayPostgres",
                "PushRelayProviders",
                "PushRelayTestSupport",
                "PushRelayEventLoopClock",
                "PushRelayFuzzing",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                "PushRelayWebPush",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ]
)

// `PUSHRELAY_SANITIZE=thread swift test` (what `scripts/sanitize` runs; `address` works too): our own modules
// instrumented, the test rig and harness among them, in the same build folder as the plain build, so the dependencies
// are compiled once for both. The test targets are not instrumented: their interfaces stay the same, so the plain
// build's are reused (their half of our build); a race with an access in a test's own code is not seen.
if let sanitizer = Context.environment["PUSHRELAY_SANITIZE"], !sanitizer.isEmpty {
    let flags = ["-sanitize=\(sanitizer)"]
    for target in package.targets where target.type != .plugin && target.type != .test {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(flags)]
        target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(flags)]
    }
}

// `PUSHRELAY_FUZZ=1 swift build --product pushrelay-fuzz` (what `scripts/fuzz` runs): our parser modules instrumented
// for libFuzzer and AddressSanitizer, and the libFuzzer executable over `PushRelayFuzzing`. The dependencies are not
// instrumented, so the build folder's are reused.
if Context.environment["PUSHRELAY_FUZZ"] == "1" {
    let sanitizers = ["-sanitize=fuzzer,address"]
    let instrumented: Set = [
        "PushRelayCore", "PushRelayWebPush", "PushRelayHTTP", "PushRelayConfiguration", "PushRelayPushChannel", "PushRelayFuzzing",
    ]
    for target in package.targets where instrumented.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(sanitizers)]
    }
    package.targets += [
        .target(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
        .executableTarget(
            name: "pushrelay-fuzz",
            dependencies: ["PushRelayFuzzing", "CLibFuzzer"],
            path: "Fuzz/Driver",
            swiftSettings: swiftSettings + [.unsafeFlags(sanitizers)],
            linkerSettings: [.unsafeFlags(sanitizers + ["-use-ld=lld"])]
        ),
    ]
    package.products.append(.executable(name: "pushrelay-fuzz", targets: ["pushrelay-fuzz"]))
}
