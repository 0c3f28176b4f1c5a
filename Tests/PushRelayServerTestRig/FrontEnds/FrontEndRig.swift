import Foundation
import NIOCore
import NIOHTTP2
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayTestHarness
import PushRelayTestSupport

/// Which HTTP/2 implementation plays the providers' front end: the in-repo fakes on swift-nio-http2 (`FakeFrontEnd`),
/// or nghttp2 through Node's `http2` module (`NodeFrontEnd`). A test run against both is not one reading of the RFC
/// twice.
package enum FrontEndKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case nio
    case nghttp2

    package var description: String { rawValue }
}

/// The knobs both front ends turn, each as its own library does it.
package struct FrontEndKnobs: Sendable {
    package var maxConcurrentStreams: Int?
    package var goAwayEvery: Int?
    package var goAwayLimit: Int?
    /// How long after its GOAWAY the front end closes the connection.
    package var goAwayCloseAfterMs = 1000
    /// APNs' shutdown: `INTERNAL_ERROR` with `{"reason":"Shutdown"}`.
    package var goAwayWithShutdownError = false
    package var refuseEvery: Int?
    package var resetAfterProcessingEvery: Int?
    /// Each answer waits a random time in this range (nghttp2 front end only).
    package var answerDelayMs: ClosedRange<Int>?
}

/// What one request did at the front end: its path, the status it was answered and the device token it was for.
package struct FrontEndRecord: Sendable {
    package var path: String
    package var status: Int
    package var token: String?
}

/// The front end a test runs against, whichever implementation: the FCM and APNs endpoints, their knobs and what they
/// saw.
package struct FrontEndUnderTest: Sendable {
    package let kind: FrontEndKind
    package let env: FakeProviderEnvironment
    package let node: NodeFrontEnd?

    package func set(_ change: (inout FrontEndKnobs) -> Void) async throws {
        var knobs = FrontEndKnobs()
        change(&knobs)
        if let node {
            try await node.set([
                "maxConcurrentStreams": knobs.maxConcurrentStreams.map { .int(Int64($0)) } ?? .null,
                "goAwayEvery": knobs.goAwayEvery.map { .int(Int64($0)) } ?? .null,
                "goAwayLimit": knobs.goAwayLimit.map { .int(Int64($0)) } ?? .null,
                "goAwayCloseAfterMs": .int(Int64(knobs.goAwayCloseAfterMs)),
                "goAwayError": knobs.goAwayWithShutdownError ? .object(["code": "INTERNAL_ERROR", "debugData": #"{"reason":"Shutdown"}"#]) : .null,
                "refuseEvery": knobs.refuseEvery.map { .int(Int64($0)) } ?? .null,
                "resetAfterProcessingEvery": knobs.resetAfterProcessingEvery.map { .int(Int64($0)) } ?? .null,
                "answerDelayMs": knobs.answerDelayMs.map { .array([.int(Int64($0.lowerBound)), .int(Int64($0.upperBound))]) } ?? .null,
            ])
            return
        }
        precondition(knobs.answerDelayMs == nil, "the NIO front end has no answer delay")
        for frontEnd in [env.fcm.frontEnd, env.apns.frontEnd] {
            frontEnd.set {
                $0.maxConcurrentStreams = knobs.maxConcurrentStreams
                $0.goAwayEvery = knobs.goAwayEvery
                $0.goAwayLimit = knobs.goAwayLimit
                $0.goAwayCloseAfter = .milliseconds(Int64(knobs.goAwayCloseAfterMs))
                $0.goAwayError = knobs.goAwayWithShutdownError ? (.internalError, #"{"reason":"Shutdown"}"#) : nil
                $0.refuseEvery = knobs.refuseEvery
                $0.resetAfterProcessingEvery = knobs.resetAfterProcessingEvery
            }
        }
    }

    /// Every request the front end processed (refused ones and those above a GOAWAY's last stream id are not).
    package func records() async throws -> [FrontEndRecord] {
        if let node {
            return try await node.state().records.map { FrontEndRecord(path: $0.path, status: $0.status, token: $0.token) }
        }
        let fcm = env.fcm.records.filter { $0.path.hasSuffix("messages:send") }.map {
            FrontEndRecord(path: $0.path, status: $0.status, token: $0.body?["message"]?["token"]?.stringValue)
        }
        let apns = env.apns.records.map { FrontEndRecord(path: $0.path, status: $0.status, token: $0.deviceToken) }
        return fcm + apns
    }

    /// How many times each device token reached the front end (any status).
    package func deliveries() async throws -> [String: Int] {
        var seen: [String: Int] = [:]
        for record in try await records() { if let token = record.token { seen[token, default: 0] += 1 } }
        return seen
    }

    package func goAwaysSent() async throws -> Int {
        if let node { return try await node.state().goAways }
        return env.fcm.frontEnd.goAwaysSent + env.apns.frontEnd.goAwaysSent
    }

    package func refusedStreams() async throws -> Int {
        if let node { return try await node.state().refused }
        return env.fcm.frontEnd.refusedStreams + env.apns.frontEnd.refusedStreams
    }

    package func acceptedConnections() async throws -> Int {
        if let node { return try await node.state().connections }
        return env.fcm.acceptedConnections + env.apns.acceptedConnections
    }

    package func tokenRequests() async throws -> Int {
        if let node { return try await node.state().tokenRequests }
        return env.fcm.tokenRequests
    }

    package func revokeAccessTokens() async throws {
        if let node { return try await node.revokeAccessTokens() }
        env.fcm.revokeAccessTokens()
    }

    package func changeMaxConcurrentStreams(to value: Int) async throws {
        if let node { return try await node.changeMaxConcurrentStreams(to: value) }
        env.fcm.frontEnd.changeMaxConcurrentStreams(to: value)
        env.apns.frontEnd.changeMaxConcurrentStreams(to: value)
    }

    /// The FCM front end's port (the NIO fakes have one each; the nghttp2 one serves both).
    package var fcmPort: Int { node?.port ?? env.fcm.port }
}

/// Runs a PushRelay whose `fcm` and `apns` providers talk to a front end of `kind` (real TLS and HTTP/2).
package func withFrontEnd(
    _ kind: FrontEndKind,
    apps: [AppProviders.Entry] = [.init(match: "io.robbie.HomeAssistant*", provider: "apns"), .init(match: "*", provider: "fcm")],
    configure: @escaping (inout PushRelayConfig) -> Void = { _ in },
    configureWithFrontEnd: @escaping (inout PushRelayConfig, FrontEndUnderTest) -> Void = { _, _ in },
    _ body: @Sendable (TestServer, FrontEndUnderTest) async throws -> Void
) async throws {
    guard kind == .nghttp2 else {
        try await withProviderFakes(
            apps: apps,
            configure: configure,
            configureWithFakes: { c, env in configureWithFrontEnd(&c, FrontEndUnderTest(kind: .nio, env: env, node: nil)) }
        ) { s, env in
            try await body(s, FrontEndUnderTest(kind: .nio, env: env, node: nil))
        }
        return
    }
    let directory = TempPath.directory(prefix: "nghttp2-front-end")
    let authority = try TestCertificateAuthority(commonName: "nghttp2 front end CA")
    let node = try await NodeFrontEnd.start(authority: authority, directory: directory)
    do {
        let caFile = directory + "/nghttp2-ca.pem"
        try authority.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        try await withProviderFakes(
            apps: apps,
            configure: configure,
            configureWithFakes: { c, env in
                let accountFile = try? env.serviceAccount.write(to: directory, tokenURI: node.tokenURI)
                c.providers["fcm"]?.options["endpoint"] = .string(node.endpoint)
                c.providers["fcm"]?.options["ca_file"] = .string(caFile)
                c.providers["fcm"]?.options["service_account_file"] = .string(accountFile ?? "")
                c.providers["apns"]?.options["endpoint"] = .string(node.endpoint)
                c.providers["apns"]?.options["ca_file"] = .string(caFile)
                configureWithFrontEnd(&c, FrontEndUnderTest(kind: .nghttp2, env: env, node: node))
            }
        ) { s, env in
            try await body(s, FrontEndUnderTest(kind: .nghttp2, env: env, node: node))
        }
    } catch {
        await node.shutdown()
        throw error
    }
    await node.shutdown()
}
