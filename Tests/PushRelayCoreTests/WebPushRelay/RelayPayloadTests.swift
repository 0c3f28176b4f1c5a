import Foundation
import PushRelayCore
import Testing

@Suite struct RelayPayloadTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func apnsAesgcmCarriesKeyAndSalt() throws {
        let h = WebPushHeaders(encoding: .aesgcm(dh: [1, 2, 3], salt: [0xFF]), ttlSeconds: 60, urgency: .veryLow, topic: "t")
        let n = try RelayPayload.apns(body: [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B], headers: h, extra: "acct/1", alertText: "🎺", now: now)
        let apns = try #require(n.apns)
        #expect(
            apns.payload == [
                "aps": ["alert": "🎺", "mutable-content": 1, "content-available": 1],
                "p": "HelloWorld", "k": "09c6", "s": "30", "x": "acct/1",
            ]
        )
        #expect(apns.headers == ["apns-push-type": "alert", "apns-priority": "5", "apns-expiration": "1800000060", "apns-collapse-id": "t"])
    }

    @Test func apnsAes128gcmHasNoKeyOrSaltAndTTLZeroIsExpirationZero() throws {
        let n = try RelayPayload.apns(body: [0], headers: WebPushHeaders(encoding: .aes128gcm, ttlSeconds: 0), extra: nil, alertText: "New", now: now)
        #expect(n.apns?.payload == ["aps": ["alert": "New", "mutable-content": 1, "content-available": 1], "p": "00"])
        #expect(n.apns?.headers == ["apns-push-type": "alert", "apns-priority": "10", "apns-expiration": "0"])
    }

    @Test func fcmMessageMatchesTheFCMRelay() throws {
        let a = try RelayPayload.fcm(
            token: "tok",
            body: [0xFF],
            headers: WebPushHeaders(encoding: .aes128gcm, ttlSeconds: 30, urgency: .low, topic: "c"),
            extra: nil,
            alertText: "🎺"
        )
        #expect(
            a.fcmMessage == [
                "token": "tok", "data": ["p": "30", "rfc": "1"], "notification": ["title": "🎺"],
                "android": ["priority": "normal", "ttl": "30s", "collapse_key": "c"],
                "apns": ["payload": ["aps": ["mutable-content": 1, "content-available": 1]]],
            ]
        )
        let b = try RelayPayload.fcm(
            token: "tok",
            body: [0xFF],
            headers: WebPushHeaders(encoding: .aesgcm(dh: [1], salt: [0])),
            extra: "x1",
            alertText: "A"
        )
        #expect(b.fcmMessage["data"] == ["p": "30", "k": "01", "s": "00", "x": "x1"])
        #expect(b.fcmMessage["android"] == ["priority": "high"])
    }

    @Test func tooLargeAfterEncodingIsRefused() {
        let body = [UInt8](repeating: 7, count: 3500)  // 4375 characters of z85
        #expect(throws: RelayPayloadError.self) {
            try RelayPayload.apns(body: body, headers: WebPushHeaders(encoding: .aes128gcm), extra: nil, alertText: "a", now: now)
        }
        #expect(throws: RelayPayloadError.self) {
            try RelayPayload.fcm(token: "t", body: body, headers: WebPushHeaders(encoding: .aes128gcm), extra: nil, alertText: "a")
        }
    }
}
