import Foundation
import PushRelayCore
import PushRelayHTTP
import PushRelayHomeAssistant
import PushRelayMatrixGateway
import PushRelayServerTestRig
import Testing

@testable import PushRelayServer

/// The notify POSTs (Home Assistant's and the Matrix gateway's) are answered in the connection's pipeline
/// (`NotifyFastPath`) for speed; the router serves the same routes when that handler is not installed, and on a server
/// with it a request pipelined behind one the router answers. Every answer must be byte for byte the same, every
/// header included, and the connection closed or kept alike: every notify path, with a valid, an invalid, a refused and
/// an oversized body (declared and chunked; alone, followed by another request on the connection, and pipelined behind
/// one), a body or bytes behind the request that are not HTTP (answered below both paths), pipelined, over HTTP/1.0,
/// with a query string and with the caller's request id. Only `Date`, a generated `X-Request-Id` and the sandbox
/// provider's random message id may differ. Each exchange runs on a fresh server of each
/// kind with the same clock, so the quota answers agree.
@Suite struct NotifyPathsDifferentialTests {
    typealias Post = NotifyFastPathTests

    static let limit = 2048

    /// One exchange: what is written on one connection (the last request closes it).
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        /// The status of the first answer.
        var status: Int
        var requests: @Sendable (String) -> String
        var testDescription: String { name }
    }

    static func chunked(_ path: String, _ body: String, close: Bool = true) -> String {
        let chunks = stride(from: 0, to: body.utf8.count, by: 1000).map { start -> String in
            let piece = String(decoding: Array(body.utf8)[start..<min(start + 1000, body.utf8.count)], as: UTF8.self)
            return String(piece.utf8.count, radix: 16) + "\r\n" + piece + "\r\n"
        }
        return "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            + (close ? "Connection: close\r\n" : "") + "\r\n" + chunks.joined() + "0\r\n\r\n"
    }

    /// A POST whose chunked body breaks off with bytes that are not a chunk: answered by the parse-error answerer on
    /// both kinds of server, with the same head as any answer.
    static func brokenChunked(_ path: String) -> String {
        "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\nZZ\r\n"
    }

    /// The oversized exchanges of a route whose too-large body is `big`: the answer ends the connection on either path,
    /// so a request behind it on the connection is never answered, and one the router answers ahead of it changes
    /// nothing.
    static func oversized(_ big: String) -> [Case] {
        [
            Case(name: "oversized, declared", status: 413) { Post.post($0, big, close: true) },
            Case(name: "oversized, chunked", status: 413) { chunked($0, big + big) },
            Case(name: "oversized, declared, then another request", status: 413) { Post.post($0, big) + Post.get("/health", close: true) },
            Case(name: "oversized, chunked, then another request", status: 413) {
                chunked($0, big + big, close: false) + Post.get("/health", close: true)
            },
            Case(name: "oversized, pipelined behind another request", status: 200) {
                Post.get("/health") + Post.post($0, big) + Post.get("/health", close: true)
            },
            Case(name: "oversized, chunked, pipelined behind another request", status: 200) {
                Post.get("/health") + chunked($0, big + big, close: false) + Post.get("/health", close: true)
            },
        ]
    }

    static let cases: [Case] =
        [
            Case(name: "valid", status: 201) { Post.post($0, Post.notification("diff-token-valid-0123456789"), close: true) },
            Case(name: "not JSON", status: 400) { Post.post($0, "{not json", close: true) },
            Case(name: "not an object", status: 400) { Post.post($0, "[1,2]", close: true) },
            Case(name: "no push_token", status: 403) { Post.post($0, #"{"message":"hi"}"#, close: true) },
            Case(name: "token not a string", status: 400) { Post.post($0, #"{"message":"hi","push_token":7}"#, close: true) },
            Case(name: "a broken chunked body", status: 400) { brokenChunked($0) },
            Case(name: "bytes that are not HTTP behind a valid request", status: 201) {
                Post.post($0, Post.notification("diff-token-garbage-0123456789")) + "GARBAGE\r\n\r\n"
            },
        ] + oversized(#"{"message":""# + String(repeating: "x", count: limit) + #""}"#) + [
            Case(name: "pipelined", status: 201) {
                Post.post($0, Post.notification("diff-token-pipe-0123456789")) + Post.post($0, "{broken")
                    + Post.post($0, Post.notification("diff-token-pipe-0123456789"), close: true)
            },
            Case(name: "HTTP/1.0", status: 201) { path in
                let body = Post.notification("diff-token-http10-0123456789")
                return "POST \(path) HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            },
            Case(name: "query string", status: 201) { Post.post($0 + "?source=ha", Post.notification("diff-token-query-0123456789"), close: true) },
            Case(name: "the caller's request id", status: 201) { path in
                let body = Post.notification("diff-token-rid-0123456789")
                return "POST \(path) HTTP/1.1\r\nHost: x\r\nX-Request-Id: ha-42.a/b\r\nContent-Length: \(body.utf8.count)\r\n"
                    + "Connection: close\r\n\r\n" + body
            },
        ]

    static let paths = HomeAssistantNotifyRoutes.all.map(\.path)

    static func matrixNotify(_ event: String, pushkey: String = "diff-pushkey-1") -> String {
        #"{"notification":{"event_id":"\#(event)","room_id":"!room:example.org","type":"m.room.message","sender":"@a:example.org","#
            + #""counts":{"unread":2},"devices":[{"app_id":"im.diff.app","pushkey":"\#(pushkey)","pushkey_ts":1700000000}]}}"#
    }

    static let matrixPath = MatrixRoutes<PushRelayRequestContext>.path

    /// The same kinds of exchange on the Matrix gateway's path (its errors have Matrix's form, `M_TOO_LARGE` included).
    static let matrixCases: [Case] =
        [
            Case(name: "valid", status: 200) { Post.post($0, matrixNotify("$valid")) + Post.get("/health", close: true) },
            Case(name: "not JSON", status: 400) { Post.post($0, "{not json", close: true) },
            Case(name: "no notification", status: 400) { Post.post($0, #"{"devices":[]}"#, close: true) },
            Case(name: "a broken chunked body", status: 400) { brokenChunked($0) },
            Case(name: "a device without a pushkey", status: 400) {
                Post.post($0, #"{"notification":{"devices":[{"app_id":"im.diff.app"}]}}"#, close: true)
            },
            Case(name: "an app nobody configured", status: 200) {
                Post.post($0, matrixNotify("$unknown").replacingOccurrences(of: "im.diff.app", with: "im.other.app"), close: true)
            },
        ] + oversized(#"{"notification":{"content":""# + String(repeating: "x", count: limit) + #""}}"#) + [
            Case(name: "pipelined, a repeat de-duplicated", status: 200) {
                Post.post($0, matrixNotify("$pipe")) + Post.post($0, "[]") + Post.post($0, matrixNotify("$pipe"), close: true)
            },
            Case(name: "HTTP/1.0", status: 200) { path in
                let body = matrixNotify("$http10")
                return "POST \(path) HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            },
            Case(name: "query string", status: 200) { Post.post($0 + "?x=1", matrixNotify("$query"), close: true) },
            Case(name: "the caller's request id", status: 200) { path in
                let body = matrixNotify("$rid")
                return "POST \(path) HTTP/1.1\r\nHost: x\r\nX-Request-Id: ha-42.a/b\r\nContent-Length: \(body.utf8.count)\r\n"
                    + "Connection: close\r\n\r\n" + body
            },
        ]

    /// The exchange's bytes with the `Date` values and generated request ids blanked.
    static func normalized(_ text: String) -> String {
        var out = text
        for (pattern, replacement) in [
            (#"(?im)^(date: )[^\r\n]*"#, "$1<date>"),
            (#"(?im)^(x-request-id: )(?!ha-42\.a/b)[^\r\n]*"#, "$1<generated>"),
            (#""messageId":"sandbox:[0-9a-f-]{36}""#, #""messageId":"sandbox:<uuid>""#),
        ] {
            out = out.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        return out
    }

    static func exchange(_ requests: String, notifyInPipeline: Bool) async throws -> RawHTTP.Exchange {
        try await TestServer.with(
            notifyInPipeline: notifyInPipeline,
            configure: { c in
                c.http.maxBodyBytes = limit
                c.matrix.apps = ["im.diff.app": .init(provider: "sandbox", format: .fcm(.init()))]
            }
        ) { (s: TestServer) async throws in
            await RawHTTP.exchange(port: s.port, requests)
        }
    }

    /// An oversized body's 413 says `Connection: close` and is the connection's last answer, whichever path gave it.
    static func expectOversizedEndsTheConnection(_ c: Case, _ exchange: RawHTTP.Exchange) {
        guard c.name.hasPrefix("oversized") else { return }
        #expect(exchange.responses.last?.status == 413, "\(exchange)")
        #expect(exchange.responses.last?.headers["connection"] == "close", "\(exchange)")
        #expect(exchange.closed, "\(exchange)")
    }

    @Test(arguments: cases, paths)
    func bothPathsAnswerTheSame(_ c: Case, path: String) async throws {
        let requests = c.requests(path)
        let pipeline = try await Self.exchange(requests, notifyInPipeline: true)
        let router = try await Self.exchange(requests, notifyInPipeline: false)
        #expect(pipeline.responses.first?.status == c.status, "\(pipeline)")
        #expect(Self.normalized(pipeline.text) == Self.normalized(router.text), "pipeline:\n\(pipeline.text)\nrouter:\n\(router.text)")
        #expect(pipeline.closed == router.closed)
        Self.expectOversizedEndsTheConnection(c, pipeline)
    }

    @Test(arguments: matrixCases)
    func bothPathsAnswerTheMatrixGatewayTheSame(_ c: Case) async throws {
        let requests = c.requests(Self.matrixPath)
        let pipeline = try await Self.exchange(requests, notifyInPipeline: true)
        let router = try await Self.exchange(requests, notifyInPipeline: false)
        #expect(pipeline.responses.first?.status == c.status, "\(pipeline)")
        #expect(Self.normalized(pipeline.text) == Self.normalized(router.text), "pipeline:\n\(pipeline.text)\nrouter:\n\(router.text)")
        #expect(pipeline.closed == router.closed)
        Self.expectOversizedEndsTheConnection(c, pipeline)
    }
}
