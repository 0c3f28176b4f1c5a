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
        let t = IOSTranslation.translate(n, now: Date())
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

    @Test func androidCommandsAreSealedLikeAnyMessage() {
        let n = HANotification(
            message: "command_broadcast_intent",
            data: ["intent_action": "secret.action", "intent_extras": "door:4711"],
            pushToken: "fcm:t",
            registrationInfo: .init(appID: "io.homeassistant.companion.android")
        )
        let t = AndroidTranslation.translate(n)
        #expect(EncryptedNotification.canSeal(t, platform: .android))
        let sealed = EncryptedNotification.apply(t, platform: .android, sealed: SealedPayload(ciphertext: "c", iv: "i", tag: "g"), alertText: "x")
        #expect(sealed.fcmMessage["data"]?["intent_extras"] == nil, "the command's data is sealed")
        #expect(sealed.fcmMessage["data"]?["encrypted"] == "c")
        #expect(sealed.command == "command_broadcast_intent", "still an exempt command")
    }

    @Test func iOSCommandsAreSealedAndStaySilent() {
        let n = HANotification(
            message: "request_location_update",
            pushToken: String(repeating: "ab", count: 32),
            registrationInfo: .init(appID: "io.robbie.HomeAssistant", webhookID: "hook-secret")
        )
        let t = IOSTranslation.translate(n, now: Date())
        #expect(EncryptedNotification.canSeal(t, platform: .ios))
        let sealed = EncryptedNotification.apply(t, platform: .ios, sealed: SealedPayload(ciphertext: "c", iv: "i", tag: "g"), alertText: "x")
        let payload = sealed.apns?.payload
        #expect(payload?["aps"] == ["content-available": 1], "a background command stays a silent push")
        #expect(payload?["homeassistant"] == nil && payload?["webhook_id"] == nil, "its custom keys are sealed")
        #expect(payload?["encrypted"] == "c")
        #expect(sealed.fcmMessage["notification"] == nil, "no visible alert is added")
    }
}
