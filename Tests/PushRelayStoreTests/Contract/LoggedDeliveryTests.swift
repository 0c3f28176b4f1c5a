import Foundation
import PushRelayCore
import PushRelayStore
import Testing

/// A delivery-log row is read back typed: the platform column's values (a Home Assistant platform or a Matrix
/// pusher's format) round-trip, and a value no build writes is an error that names the row, the column and the value,
/// not a guess.
@Suite struct LoggedDeliveryTests {
    @Test(arguments: ["android", "ios", "matrix-fcm", "matrix-apns", "matrix-webpush"])
    func thePlatformColumnRoundTrips(_ raw: String) throws {
        let platform = try #require(DeliveryPlatform(rawValue: raw))
        #expect(platform.rawValue == raw)
    }

    @Test func platformsAreTyped() {
        #expect(DeliveryPlatform(rawValue: "ios") == .homeAssistant(.ios))
        #expect(DeliveryPlatform(rawValue: "matrix-webpush") == .matrix(format: .webPush))
        #expect(DeliveryPlatform(rawValue: "matrix-apns") == .matrix(format: .apns))
        #expect(DeliveryPlatform(rawValue: "matrix-") == nil)
        #expect(DeliveryPlatform(rawValue: "matrix-fax") == nil, "a format no Matrix app has")
        #expect(DeliveryPlatform(rawValue: "matrix-webPush") == nil)
        #expect(DeliveryPlatform(rawValue: "windows") == nil)
    }

    static func read(
        at: String = "2026-11-21T13:05:00.000Z",
        day: String = "2026-11-21",
        platform: String? = "matrix-fcm",
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
            platform: platform,
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
        #expect(row.platform == .matrix(format: .fcm))
        #expect(row.kind == .rateLimitNotice)
        #expect(row.outcome == .invalidToken)
    }

    @Test func aRowWithoutAPlatformIsReadWithout() throws {
        #expect(try Self.read(platform: nil).platform == nil)
    }

    @Test func aValueNoBuildWritesIsAnErrorNamingTheRowAndTheColumn() {
        let bad: [(column: String, value: String, read: () throws(StorageError) -> LoggedDelivery)] = [
            ("kind", "fax", { () throws(StorageError) in try Self.read(kind: "fax") }),
            ("outcome", "maybe", { () throws(StorageError) in try Self.read(outcome: "maybe") }),
            ("at", "yesterday", { () throws(StorageError) in try Self.read(at: "yesterday") }),
            ("day", "someday", { () throws(StorageError) in try Self.read(day: "someday") }),
            ("platform", "windows", { () throws(StorageError) in try Self.read(platform: "windows") }),
            ("platform", "matrix-", { () throws(StorageError) in try Self.read(platform: "matrix-") }),
            ("platform", "matrix-fax", { () throws(StorageError) in try Self.read(platform: "matrix-fax") }),
        ]
        for (column, value, read) in bad {
            #expect(throws: StorageError.unreadableRow(table: "delivery_log", id: 7, column: column, value: value)) { try read() }
        }
        #expect(
            StorageError.unreadableRow(table: "delivery_log", id: 7, column: "platform", value: "windows").description
                == "row 7 of delivery_log holds 'windows' in platform, a value this PushRelay cannot read"
        )
    }
}
