import Foundation
import PushRelayCore
import Testing

@testable import PushRelayServer

/// Home Assistant's notify POSTs are answered in the connection's pipeline (`HomeAssistantFastPath`) for speed; the
/// router serves the same routes when that handler is not installed. Both must answer byte for byte the same: every
/// notify path, with a valid, an invalid, a refused and an oversized body (declared and chunked), pipelined, over
/// HTTP/1.0, with a query string and with the caller's request id. Only `Date`, a generated `X-Request-Id` and the
/// sandbox provider's random message id may differ. Each exchange runs on a fresh server of each kind with the same clock, so the quota answers agree.
@Suite struct NotifyPathsDifferentialTests {
    typealias Post = NotifyFastPathTests

    static let limit = 2048

    /// One exchange: what is written on one connection (the last request closes it).
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var requests: @Sendable (String) -> String
        var testDescription: String { name }
    }

    static func chunked(_ path: String, _ body: String) -> String {
        let chunks = stride(from: 0, to: body.utf8.count, by: 1000).map { start -> String in
            let piece = String(decoding: Array(body.utf8)[start..<min(start + 1000, body.utf8.count)], as: UTF8.self)
            return String(piece.utf8.count, radix: 16) + "\r\n" + piece + "\r\n"
        }
        return "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            + "Connection: close\r\n\r\n" + chunks.joined() + "0\r\n\r\n"
    }

    static let cases: [Case] = [
        Case(name: "valid") { Post.post($0, Post.notification("diff-token-valid-0123456789"), close: true) },
        Case(name: "not JSON") { Post.post($0, "{not json", close: true) },
        Case(name: "not an object") { Post.post($0, "[1,2]", close: true) },
        Case(name: "no push_token") { Post.post($0, #"{"message":"hi"}"#, close: true) },
        Case(name: "token not a string") { Post.post($0, #"{"message":"hi","push_token":7}"#, close: true) },
        Case(name: "oversized, declared") {
            Post.post($0, #"{"message":""# + String(repeating: "x", count: limit) + #""}"#, close: true)
        },
        Case(name: "oversized, chunked") { chunked($0, #"{"message":""# + String(repeating: "y", count: limit * 2) + #""}"#) },
        Case(name: "pipelined") {
            Post.post($0, Post.notification("diff-token-pipe-0123456789")) + Post.post($0, "{broken")
                + Post.post($0, Post.notification("diff-token-pipe-0123456789"), close: true)
        },
        Case(name: "HTTP/1.0") { path in
            let body = Post.notification("diff-token-http10-0123456789")
            return "POST \(path) HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        },
        Case(name: "query string") { Post.post($0 + "?source=ha", Post.notification("diff-token-query-0123456789"), close: true) },
        Case(name: "the caller's request id") { path in
            let body = Post.notification("diff-token-rid-0123456789")
            return "POST \(path) HTTP/1.1\r\nHost: x\r\nX-Request-Id: ha-42.a/b\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n" + body
        },
    ]

    static let paths = HomeAssistantNotifyRoutes.all.map(\.path)

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
            configure: { $0.http.maxBodyBytes = limit }
        ) { (s: TestServer) async throws in
            await RawHTTP.exchange(port: s.port, requests)
        }
    }

    @Test(arguments: cases, paths)
    func bothPathsAnswerTheSame(_ c: Case, path: String) async throws {
        let requests = c.requests(path)
        let pipeline = try await Self.exchange(requests, notifyInPipeline: true)
        let router = try await Self.exchange(requests, notifyInPipeline: false)
        #expect(!pipeline.bytes.isEmpty, "\(pipeline)")
        #expect(Self.normalized(pipeline.text) == Self.normalized(router.text), "pipeline:\n\(pipeline.text)\nrouter:\n\(router.text)")
        #expect(pipeline.closed == router.closed)
    }
}
