import Foundation
import PushRelayCore
import Testing

@Suite struct EncryptedNotificationTests {
    static let sealed = SealedPayload(ciphertext: "CT", iv: "IV", tag: "TG")

    @Test func androidDataIsReplacedByTheSealedFields() {
        let n = HANotification(
            message: "Door open",
            title: "Security",
            data: ["priority": "high", "ttl": 0],
            pushToken: "fcm:t",
            registrationInfo: .init(appID: "io.homeassistant.companion.android", webhookID: "hook")
        )
        let t = AndroidTranslation.translate(n)
        #expect(EncryptedNotification.canSeal(t, platform: .android))
        let plain = try? JSONParser.parse(EncryptedNotification.plaintext(t, platform: .android))
        #expect(plain == t.fcmMessage["data"])
        #expect(plain?["message"] == "Door open")
        let sealed = EncryptedNotification.apply(t, platform: .android, sealed: Self.sealed, alertText: "New notification")
        #expect(sealed.fcmMessage["data"] == ["encrypted": "CT", "iv": "IV", "tag": "TG", "encryption_type": "aes_256_gcm"])
        #expect(sealed.fcmMessage["android"] == t.fcmMessage["android"], "priority and TTL are kept")
        #expect(!sealed.fcmMessage.jsonString().contains("Door") && !sealed.fcmMessage.jsonString().contains("hook"))
    }

    @Test func iosGetsAGenericAlertAndMutableContent() throws {
        let n = HANotification(
            message: "Door open",
            title: "Security",
            data: ["push": ["sound": "chime.caf", "badge": 2], "url": "/lovelace"],
            pushToken: String(repeating: "ab", count: 32),
            registrationInfo: .init(appID: "io.robbie.HomeAssistant", webhookID: "hook")
        )
        let t = IOSTranslation.translate(n)
        #expect(EncryptedNotification.canSeal(t, platform: .ios))
        #expect(try JSONParser.parse(EncryptedNotification.plaintext(t, platform: .ios)) == t.apns?.payload)
        let s = EncryptedNotification.apply(t, platform: .ios, sealed: Self.sealed, alertText: "New notification")
        let expected: JSONValue = [
            "aps": ["alert": ["body": "New notification"], "mutable-content": 1, "sound": "chime.caf", "badge": 2],
            "encrypted": "CT", "iv": "IV", "tag": "TG", "encryption_type": "aes_256_gcm",
        ]
        #expect(s.apns?.payload == expected)
        #expect(s.apns?.headers == t.apns?.headers)
        #expect(s.fcmMessage["apns"]?["payload"] == expected)
        #expect(s.fcmMessage["notification"] == ["body": "New notification"])
        for text in ["Door", "Security", "lovelace", "hook"] {
            #expect(!s.fcmMessage.jsonString().contains(text) && !(s.apns?.payload.jsonString().contains(text) ?? true))
        }
    }

    @Test func commandsAreNotSealed() {
        let n = HANotification(
            message: "request_location_update",
            pushToken: "fcm:t",
            registrationInfo: .init(appID: "io.homeassistant.companion.android")
        )
        #expect(EncryptedNotification.canSeal(AndroidTranslation.translate(n), platform: .android) == false)
    }
}
