import Foundation
import PushRelayCore
import Testing

@Suite struct PushTokenIdentityTests {
    static let apns = String(repeating: "ab12", count: 16)

    @Test func apnsTokensFoldToLowerCase() {
        #expect(PushTokenIdentity.canonical(Self.apns.uppercased()) == Self.apns)
        #expect(PushTokenIdentity.canonical("AB12" + Self.apns.dropFirst(4)) == Self.apns)
        #expect(PushTokenIdentity.canonical(Self.apns) == Self.apns)
    }

    @Test func everythingElseIsKeptAsSent() {
        // FCM tokens are case-sensitive; short hex cannot be an APNs token.
        let fcm = "cXyZ:APA91bHUN-" + String(repeating: "Ab", count: 60)
        #expect(PushTokenIdentity.canonical(fcm) == fcm)
        #expect(PushTokenIdentity.canonical("ABCDEF") == "ABCDEF")
        #expect(PushTokenIdentity.canonical(String(repeating: "A", count: 201)) == String(repeating: "A", count: 201))
        #expect(PushTokenIdentity.canonical(Self.apns.uppercased() + "G") == Self.apns.uppercased() + "G")
    }

    @Test func aRequestsTokensAreReadCanonical() throws {
        let n = try HANotification(body: [
            "push_token": .string(Self.apns.uppercased()), "live_activity_token": .string(Self.apns.uppercased()),
        ])
        #expect(n.pushToken == Self.apns)
        #expect(n.liveActivityToken == Self.apns)
    }

    @Test func matrixAPNsPushkeysHaveOneSpelling() {
        let bytes = Data((0..<32).map { UInt8($0 * 7 % 256) })
        let standard = bytes.base64EncodedString()
        let urlSafe = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        let format = MatrixFormat.apns(.init())
        #expect(format.canonicalPushkey(urlSafe) == standard)
        #expect(format.canonicalPushkey(standard) == standard)
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let hexFormat = MatrixFormat.apns(.init(convertDeviceTokenToHex: false))
        #expect(hexFormat.canonicalPushkey(hex.uppercased()) == hex)
        // FCM and WebPush pushkeys are case-sensitive; a pushkey that is no token is kept (and rejected as sent).
        #expect(MatrixFormat.fcm(.init()).canonicalPushkey("AbC") == "AbC")
        #expect(format.canonicalPushkey("not base64!") == "not base64!")
    }
}
