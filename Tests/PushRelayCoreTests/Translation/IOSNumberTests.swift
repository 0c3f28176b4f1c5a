import Foundation
import Testing

@testable import PushRelayCore

/// Numbers a caller puts in a notification that no `Int64` holds: left out, never a trap (found by the ha-notify fuzz
/// target: a badge of `7777…7` stopped the process).
@Suite struct IOSNumberTests {
    @Test func aBadgeBeyondInt64IsLeftOut() {
        #expect(IOSTranslation.badgeNumber(.double(7.7e30)) == nil)
        #expect(IOSTranslation.badgeNumber(.string("1e300")) == nil)
        #expect(IOSTranslation.badgeNumber(.double(-9.3e18)) == nil)
        #expect(IOSTranslation.badgeNumber(.double(3.9)) == .int(3))
        #expect(IOSTranslation.parseInt(.double(1e19)) == nil)
        let n = HANotification(
            message: "hi",
            data: ["push": ["badge": .double(7.7e30)]],
            pushToken: String(repeating: "ab", count: 32),
            registrationInfo: .init(appID: "io.robbie.HomeAssistant")
        )
        #expect(IOSTranslation.translate(n, now: Date()).apns?.payload["aps"]?["badge"] == nil)
    }

    @Test func aRelativeLiveActivityTimeBeyondAnyClockIsLeftOut() {
        let n = HANotification(
            message: "washing",
            data: ["tag": "w", "live_update": true, "when": .double(1e300), "when_relative": true],
            pushToken: "fcm:t",
            registrationInfo: .init(appID: "io.robbie.HomeAssistant"),
            liveActivityToken: String(repeating: "cd", count: 32)
        )
        let t = IOSTranslation.translate(n, now: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(t.fcmMessage["apns"]?["payload"]?["aps"]?["content-state"]?["countdown_end"] == nil)
        #expect(t.fcmMessage["apns"]?["payload"]?["aps"]?["content-state"]?["message"] == "washing")
    }
}
