import Foundation
import Logging
import PushRelayConfiguration
import PushRelayCore
import PushRelayHTTP
import Testing

@testable import PushRelayServer

@Suite struct JSONLogHandlerTests {
    /// Collects the lines a handler writes.
    final class Lines: Sendable {
        let all = Locked<[String]>([])
        var output: JSONLogHandler.Output {
            JSONLogHandler.Output { bytes in self.all.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } }
        }
        func objects() throws -> [[String: JSONValue]] {
            try all.withLock { $0 }.map { line in
                #expect(line.hasSuffix("\n") && line.dropLast().contains("\n") == false, "one line: \(line)")
                return try #require(try JSONParser.parse(Array(line.utf8)).objectValue)
            }
        }
    }

    @Test func aLineIsOneJSONObjectWithTheFixedFieldsAndTheMetadata() throws {
        let lines = Lines()
        var logger = Logger(label: "pushrelay") { label in JSONLogHandler(label: label, output: lines.output) }
        logger.logLevel = .debug
        logger[metadataKey: "instance"] = "a"
        logger.warning(
            "delivery \"failed\"\nsecond line",
            metadata: ["provider": "fcm", "attempts": .stringConvertible(3), "tags": ["x", "y"], "instance": "b"]
        )
        logger.trace("below the level")
        let objects = try lines.objects()
        #expect(objects.count == 1)
        let o = try #require(objects.first)
        #expect(o["level"] == "warning")
        #expect(o["label"] == "pushrelay")
        #expect(o["message"] == "delivery \"failed\"\nsecond line")
        #expect(o["provider"] == "fcm")
        #expect(o["attempts"] == "3")
        #expect(o["tags"] == ["x", "y"])
        #expect(o["instance"] == "b", "the event's metadata wins over the logger's")
        #expect(o["source"] == "PushRelayHTTPTests", "the module that logged the line")
        let time = try #require(o["time"]?.stringValue)
        #expect(time.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil, "\(time)")
    }

    @Test func metadataCannotOverwriteTheFixedFields() throws {
        let lines = Lines()
        let logger = Logger(label: "pushrelay") { label in JSONLogHandler(label: label, output: lines.output) }
        logger.error("real", metadata: ["message": "forged", "level": "debug", "time": "0"])
        let o = try #require(try lines.objects().first)
        #expect(o["message"] == "real")
        #expect(o["level"] == "error")
        #expect(o["time"] != "0")
    }

    /// Most lines carry their error as metadata: it is written, unless the event has an error of its own, which wins.
    @Test func anErrorInTheMetadataIsKept() throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "disk full" } }
        let lines = Lines()
        let logger = Logger(label: "pushrelay") { label in JSONLogHandler(label: label, output: lines.output) }
        logger.error("could not store a channel binding", metadata: ["error": "SQLite error 13"])
        logger.error("write failed", error: Broken(), metadata: ["error": "from metadata"])
        let objects = try lines.objects()
        #expect(objects.first?["error"] == "SQLite error 13")
        #expect(objects.last?["error"] == "disk full")
    }

    @Test func theRequestBeingServedIsOnEveryLine() async throws {
        let lines = Lines()
        let logger = Logger(label: "pushrelay") { label in
            JSONLogHandler(label: label, output: lines.output, metadataProvider: RequestID.metadataProvider)
        }
        logger.info("outside")
        await RequestID.$current.withValue("req-42") {
            logger.info("inside")
            // A child task serving the same request carries it too.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { logger.info("child") }
            }
        }
        let objects = try lines.objects()
        #expect(objects.map { $0["message"] } == ["outside", "inside", "child"])
        #expect(objects.map { $0["request_id"] } == [nil, "req-42", "req-42"])
    }

    @Test func timestampsAreUTCWithMilliseconds() {
        #expect(JSONLogHandler.timestamp(Date(timeIntervalSince1970: 1_795_000_000.123_4)) == "2026-11-18T11:06:40.123Z")
        #expect(JSONLogHandler.timestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
    }

    @Test func theFormatIsReadFromTheConfig() throws {
        #expect(try PushRelayConfig.load(file: nil, environment: [:]).logFormat == .text)
        #expect(try PushRelayConfig.load(file: nil, environment: ["PUSHRELAY_LOG_FORMAT": "json"]).logFormat == .json)
        #expect(throws: ConfigError.self) { try PushRelayConfig.load(file: nil, environment: ["PUSHRELAY_LOG_FORMAT": "xml"]) }
    }
}
