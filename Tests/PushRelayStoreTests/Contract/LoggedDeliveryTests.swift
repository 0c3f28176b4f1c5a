import Foundation
import PushRelayCore
import PushRelayStore
import Testing

/// A delivery-log row is read back typed: the platform column's values (a Home Assistant platform or a Matrix
/// pusher's format) round-trip, and a value no build writes is an error that names the row, not a guess.
@Suite struct LoggedDeliveryTests {
    @Test(arguments: ["android", "ios", "matrix-fcm", "matrix-apns", "matrix-webpush"])
    func thePlatformColumnRoundTrips(_ raw: String) throws {
        let platform = try #require(DeliveryPlatform(rawValue: raw))
        #expect(platform.rawValue == raw)
    }

    @Test func platformsAreTyped() {
        #expect(DeliveryPlatform(rawValue: "ios") == .homeAssistant(.ios))
        #expect(DeliveryPlatform(rawValue: "matrix-webpush") == .matrix(format: "webpush"))
        #expect(DeliveryPlatform(rawValue: "matrix-") == nil)
        #expect(DeliveryPlatform(rawValue: "windows") == nil)
    }

    static func read(
        at: String = "2026-11-21T13:05:00.000Z",
        day: String = "2026-11-21",
        kind: String = "notification",
        outcome: String = "delivered"
    )
        throws(StorageError) -> LoggedDelivery
    {
        try LoggedDelivery.reading(
            id: 7,
            at: at,
            day: day,
            pushToken: "t",
            appID: nil,
            platform: "matrix-fcm",
            provider: "fcm",
            kind: kind,
            counted: true,
            outcome: outcome,
            messageID: nil,
            errorMessage: nil,
            payload: nil
        )
    }

    @Test func aRowIsReadTyped() throws {
        let row = try Self.read(kind: "rate_limit_notice", outcome: "invalid_token")
        #expect(ISO8601UTC.string(row.at) == "2026-11-21T13:05:00.000Z")
        #expect(row.day == UTCDay(string: "2026-11-21"))
        #expect(row.platform == .matrix(format: "fcm"))
        #expect(row.kind == .rateLimitNotice)
        #expect(row.outcome == .invalidToken)
    }

    @Test func aValueNoBuildWritesIsAnErrorNamingTheRow() {
        for bad in [{ try Self.read(kind: "fax") }, { try Self.read(outcome: "maybe") }, { try Self.read(at: "yesterday") }] {
            #expect(throws: StorageError.unreadableRow(table: "delivery_log", id: 7)) { try bad() }
        }
    }
}
