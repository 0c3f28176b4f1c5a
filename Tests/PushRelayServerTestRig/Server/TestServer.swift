import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOHTTP1
import PushRelayConfiguration
import PushRelayCore
import PushRelayHTTP
import PushRelaySQLite
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import ServiceLifecycle
import Testing

@testable import PushRelayServer

package struct HTTPReply {
    package var status: Int
    package var headers: [String: String]
    package var json: JSONValue
    package var rawBody: String

    /// A reply from its status, its header lines (names lowercased; of repeated names the last line wins) and its body,
    /// read as JSON where it is JSON (`.null` otherwise).
    package init(status: Int, headerLines: some Sequence<(name: String, value: String)>, body: String) {
        self.status = status
        var headers: [String: String] = [:]
        for line in headerLines { headers[line.name.lowercased()] = line.value }
        self.headers = headers
        self.json = (try? JSONParser.parse(Array(body.utf8))) ?? .null
        self.rawBody = body
    }

    package subscript(key: String) -> JSONValue? { json[key] }
    package var rateLimits: JSONValue? { json["rateLimits"] }
    package func int(_ path: String...) -> Int64? {
        var v: JSONValue? = json
        for p in path { v = v?[p] }
        if case .int(let i)? = v { return i }
        return nil
    }
}

/// A real PushRelay with a real SQLite file in a temporary directory: on a loopback port (`.socket`, the default), or
/// answered in process through HummingbirdTesting's router client (`.router`: the same router, middleware, services
/// and storage, without a socket).
///
/// `.router` is for tests of what a route answers. Whatever depends on the wire needs `.socket`: the Home Assistant
/// fast path, connection and slow-client limits, websockets, HEAD framing, per-address budgets (in process every
/// request comes from the address "unknown").
package final class TestServer: Sendable {
    package enum Transport: Sendable {
        case socket
        case router
    }

    /// The loopback port (0 with `.router`).
    package let port: Int
    /// The in-process client (`.router` only).
    package let client: (any TestClientProtocol)?
    package let database: PushRelayDatabase
    package let dbPath: String
    package let clock: ManualClock
    /// Every line the server logged, at every level (`LogCapture`).
    package let logs: LogCapture
    /// `lifecycle.beginStop()` stops the server as SIGTERM does (`.socket`); the end of `with` stops it too.
    package let lifecycle: ServerLifecycle

    package init(
        port: Int,
        client: (any TestClientProtocol)? = nil,
        database: PushRelayDatabase,
        dbPath: String,
        clock: ManualClock,
        logs: LogCapture = LogCapture(),
        lifecycle: ServerLifecycle = ServerLifecycle()
    ) {
        self.port = port
        self.client = client
        self.database = database
        self.dbPath = dbPath
        self.clock = clock
        self.logs = logs
        self.lifecycle = lifecycle
    }

    package var storage: Storage { .sqlite(database) }

    /// A path for a new SQLite file in a directory of its own.
    package static func tempPath() -> String { TempPath.make() }

    /// Runs `body` against a live server built from `yaml` (plus port 0 and a temporary database). It stops without a
    /// drain (`http.drain_period` 0) unless `configure` sets one.
    ///
    /// `clock` is the server's time port, handed to every handler and service. By default only its wall time is the
    /// test's (2026-11-21T12:00:00Z, moved with `set` and `advance`) and timers run in real time, so that no deadline
    /// waits for a test that does not step it. A test that passes a stepped `ManualClock` steps through every wait it
    /// causes (deadlines, confirm and authentication timeouts, pings); the services' polls then wait for it too. Once
    /// the body is done, the stop runs on a stepped clock moved on by `with` itself (an idle connection's linger, the
    /// wait for the connections), so that nobody has to step it.
    ///
    /// With real timers, the delivery deadline is `unhurriedDeadlineMs` and the push channel's authentication timeout
    /// `unhurriedAuthTimeoutMs` unless the test sets `delivery.deadline_ms` or `channel.auth_timeout_ms` (in `yaml` or
    /// `configure`): both run in real time (the deadline's share for the quota storage is the wait answered 503
    /// `StorageBusy`), and the whole suite started at once on two cores can hold a request's tasks, or a client's
    /// first frame, for seconds. A test about the deadline, a storage stall or the authentication timeout sets its
    /// own, or steps the clock.
    package static func with<T: Sendable>(
        _ transport: Transport = .socket,
        yaml: String = "",
        clock: ManualClock = ManualClock("2026-11-21T12:00:00Z", timers: .real),
        dbPath: String = TestServer.tempPath(),
        providers: [String: any PushProvider] = [:],
        notifyInPipeline: Bool = true,
        configure: (inout PushRelayConfig) -> Void = { _ in },
        _ body: @Sendable (TestServer) async throws -> T
    ) async throws -> T {
        var tree = try PushRelayConfig.load(file: nil, environment: ["PUSHRELAY_HTTP_PORT": "0"])
        if !yaml.isEmpty {
            let file = dbPath + ".yaml"
            try yaml.write(toFile: file, atomically: true, encoding: .utf8)
            tree = try PushRelayConfig.load(file: file, environment: ["PUSHRELAY_HTTP_PORT": "0", "PUSHRELAY_STORAGE_SQLITE_PATH": dbPath])
        }
        tree.storage.sqlitePath = dbPath
        tree.http.drainPeriodMs = 0
        for (name, _) in providers where tree.providers[name] == nil {
            tree.providers[name] = .init(name: name, type: "test")
        }
        let unhurried = clock.timers == .real
        if unhurried, !yaml.contains("deadline_ms") { tree.delivery.deadlineMs = Self.unhurriedDeadlineMs }
        if unhurried, !yaml.contains("auth_timeout_ms") { tree.channel.authTimeoutMs = Self.unhurriedAuthTimeoutMs }
        configure(&tree)
        // A test that shortened the request timeout alone keeps the deadline the server's config would accept.
        if unhurried, tree.delivery.deadlineMs == Self.unhurriedDeadlineMs, tree.http.requestTimeoutMs <= Int64(Self.unhurriedDeadlineMs) {
            tree.delivery.deadlineMs = DeliverySettings().deadlineMs
        }
        let config = tree
        // Trace level, captured: after the body, no line may hold a secret of this server (warnings still print).
        let logs = LogCapture()
        let logger = logs.logger(label: "test")
        let database = try PushRelayDatabase(path: dbPath, callers: EventLoopCallers.lookup)
        try database.migrate()
        let (portStream, portCont) = AsyncStream.makeStream(of: Int.self)
        let lifecycle = ServerLifecycle()
        let app = try await PushRelayApplication.build(
            config: config,
            storage: .sqlite(database),
            clock: clock,
            providerInstances: providers,
            notifyInPipeline: notifyInPipeline,
            lifecycle: lifecycle,
            logger: logger
        ) { channel in
            portCont.yield(channel.localAddress?.port ?? 0)
            portCont.finish()
        }
        if transport == .router {
            let result = try await app.test(.router) { client in
                let server = TestServer(port: 0, client: client, database: database, dbPath: dbPath, clock: clock, logs: logs, lifecycle: lifecycle)
                let result = try await body(server)
                let secrets = await LogCapture.secrets(of: config, database: database)
                return (result, secrets)
            }
            logs.expectNoLeaks(of: result.1)
            return result.0
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService(gracefulShutdownSignals: []) }
            var port = 0
            for await p in portStream { port = p }
            let server = TestServer(port: port, database: database, dbPath: dbPath, clock: clock, logs: logs, lifecycle: lifecycle)
            do {
                let result = try await body(server)
                let secrets = await LogCapture.secrets(of: config, database: database)
                lifecycle.beginStop()
                let stepping = Self.step(clock)
                try await group.waitForAll()
                stepping.cancel()
                logs.expectNoLeaks(of: secrets)
                return result
            } catch {
                lifecycle.beginStop()
                let stepping = Self.step(clock)
                try? await group.waitForAll()
                stepping.cancel()
                throw error
            }
        }
    }

    /// The delivery deadline of a server on real timers whose test sets none: the default's 8 s (4 s of it for the
    /// quota storage) made 25 s (12.5 s), under the default 30 s `http.request_timeout`.
    package static let unhurriedDeadlineMs = 25_000
    /// The push channel's authentication timeout of a server on real timers whose test sets none: 60 s instead of 10 s.
    package static let unhurriedAuthTimeoutMs = 60_000

    /// Moves a stepped clock on, 100 ms at a time, until cancelled: the stop's waits pass as they would in real time.
    private static func step(_ clock: ManualClock) -> Task<Void, Never> {
        Task {
            guard clock.timers == .stepped else { return }
            while !Task.isCancelled {
                clock.advance(by: .milliseconds(100))
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    package func request(_ method: HTTPMethod, _ path: String, body: String? = nil, headers: [(String, String)] = []) async throws -> HTTPReply {
        if let client { return try await Self.request(client, method, path, body: body, headers: headers) }
        var req = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        req.method = method
        for (k, v) in headers { req.headers.add(name: k, value: v) }
        if let body {
            req.headers.add(name: "Content-Type", value: "application/json")
            req.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(req, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 10 * 1024 * 1024)
        return HTTPReply(status: Int(response.status.code), headerLines: response.headers, body: String(buffer: buffer))
    }

    private static func request(
        _ client: any TestClientProtocol,
        _ method: HTTPMethod,
        _ path: String,
        body: String?,
        headers: [(String, String)]
    ) async throws -> HTTPReply {
        var fields = HTTPFields()
        for (k, v) in headers {
            guard let name = HTTPField.Name(k) else { throw TestServerError.badHeaderName(k) }
            fields.append(HTTPField(name: name, value: v))
        }
        if body != nil { fields[.contentType] = "application/json" }
        let response = try await client.executeRequest(
            uri: path,
            method: HTTPRequest.Method(method.rawValue)!,
            headers: fields,
            body: body.map { ByteBuffer(string: $0) }
        )
        return HTTPReply(
            status: response.status.code,
            headerLines: response.headers.map { (name: $0.name.canonicalName, value: $0.value) },
            body: String(buffer: response.body)
        )
    }

    package func post(_ path: String, _ body: JSONValue) async throws -> HTTPReply {
        try await request(.POST, path, body: body.jsonString())
    }

    /// A Home Assistant notification body.
    package static func haBody(
        token: String = "tok:en-1",
        message: String? = "Hello",
        title: String? = nil,
        appID: String = "io.homeassistant.companion.android",
        data: [String: JSONValue]? = nil
    ) -> JSONValue {
        var o: [String: JSONValue] = [
            "push_token": .string(token),
            "registration_info": ["app_id": .string(appID), "app_version": "2026.1", "os_version": "14", "webhook_id": "hook-1"],
        ]
        if let message { o["message"] = .string(message) }
        if let title { o["title"] = .string(title) }
        if let data { o["data"] = .object(data) }
        return .object(o)
    }

    package func android(_ body: JSONValue) async throws -> HTTPReply { try await post("/api/sendPush/android/v1", body) }
    package func ios(_ body: JSONValue) async throws -> HTTPReply { try await post("/api/sendPushNotification", body) }
}

package enum TestServerError: Error {
    case badHeaderName(String)
}

/// Asserts the Home Assistant error contract: JSON object, JSON content type, non-empty message and errorType.
package func expectJSONError(_ r: HTTPReply, status: Int, errorType: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(r.status == status, "body: \(r.rawBody)", sourceLocation: sourceLocation)
    #expect(r.headers["content-type"] == "application/json", sourceLocation: sourceLocation)
    #expect((r["message"]?.stringValue ?? "").isEmpty == false, "body: \(r.rawBody)", sourceLocation: sourceLocation)
    #expect(r["errorType"]?.stringValue != nil, sourceLocation: sourceLocation)
    if let errorType { #expect(r["errorType"]?.stringValue == errorType, sourceLocation: sourceLocation) }
}
