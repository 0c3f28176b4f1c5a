import Foundation
import PushRelayCore
import Testing

@Suite struct CallInvitePayloadTests {
    /// Reads a zlib stream of stored blocks back (enough to check the writer; the Python interop test uses real zlib).
    static func inflateStored(_ z: [UInt8]) -> [UInt8]? {
        guard z.count >= 6, z[0] == 0x78, (UInt16(z[0]) << 8 | UInt16(z[1])) % 31 == 0 else { return nil }
        var i = 2
        var out: [UInt8] = []
        while true {
            let header = z[i]
            guard header & 0x06 == 0 else { return nil }
            let len = Int(z[i + 1]) | Int(z[i + 2]) << 8
            let nlen = Int(z[i + 3]) | Int(z[i + 4]) << 8
            guard len == (~nlen & 0xFFFF) else { return nil }
            out.append(contentsOf: z[(i + 5)..<(i + 5 + len)])
            i += 5 + len
            if header & 1 == 1 { break }
        }
        let a = UInt32(z[i]) << 24 | UInt32(z[i + 1]) << 16 | UInt32(z[i + 2]) << 8 | UInt32(z[i + 3])
        guard a == ZlibStored.adler32(out), i + 4 == z.count else { return nil }
        return out
    }

    @Test func zlibStoredRoundTripsAcrossBlockBoundaries() {
        #expect(ZlibStored.adler32(Array("Wikipedia".utf8)) == 0x11E6_0398)
        for n in [0, 1, 100, 65_535, 65_536, 140_000] {
            let input = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            #expect(Self.inflateStored(ZlibStored.compress(input)) == input, "length \(n)")
        }
        #expect(ZlibStored.compress([]) == [0x78, 0x01, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01])
    }

    static let invite = CallInvite(
        notificationUUID: "6f1c…",
        callerName: "Alice",
        callerID: "+15551234",
        title: "Call",
        withVideo: true,
        inviteCiphertext: "AAAA",
        iv: "BBBB",
        tag: "CCCC"
    )

    @Test func payloadHasEveryDocumentedField() {
        #expect(
            Self.invite.payload == [
                "notification_uuid": "6f1c…", "type": "call_invite", "version": "1", "with_video": "true",
                "incoming_caller_name": "Alice", "incoming_caller_id": "+15551234", "title": "Call", "encryption_type": "aes_256_gcm",
                "invite": "AAAA", "iv": "BBBB", "tag": "CCCC",
            ]
        )
    }

    @Test func apnsIsAVoIPPushWrappedInAlert() throws {
        let n = try CallInvitePush.apns(Self.invite)
        #expect(n.apns?.headers == ["apns-push-type": "voip", "apns-priority": "10", "apns-expiration": "0"])
        #expect(n.apns?.payload["aps"]?["alert"] == Self.invite.payload)
        var big = Self.invite
        big.inviteCiphertext = String(repeating: "A", count: 5200)
        #expect(throws: CallInviteTooLarge.self) { try CallInvitePush.apns(big) }
    }

    @Test func anInviteTooLargeForItsProviderNamesTheProviderAndItsLimit() {
        var big = Self.invite
        big.inviteCiphertext = String(repeating: "A", count: 5200)
        #expect(throws: CallInviteTooLarge.self) { try CallInvitePush.fcm(big, token: "t") }
        do {
            _ = try CallInvitePush.apns(big)
            Issue.record("a 5,200-byte invite fit an APNs VoIP push")
        } catch {
            #expect(error.provider == "APNs VoIP" && error.limit == CallInvitePush.apnsVoIPLimit && error.size > error.limit)
            #expect(error.inviteBytes == 5200)
        }
        do {
            _ = try CallInvitePush.fcm(big, token: "t")
            Issue.record("a 5,200-byte invite fit an FCM message")
        } catch {
            #expect(error.provider == "FCM" && error.limit == CallInvitePush.fcmLimit && error.size > error.limit)
        }
    }

    @Test func fcmCarriesThePayloadAsABodyString() throws {
        let n = try CallInvitePush.fcm(Self.invite, token: "t")
        let body = try #require(n.fcmMessage["notification"]?["body"]?.stringValue)
        #expect(try JSONParser.parse(Array(body.utf8)) == Self.invite.payload)
        #expect(n.fcmMessage["data"] == .object([:]))
        #expect(n.fcmMessage["android"]?["priority"] == "high")
    }
}
