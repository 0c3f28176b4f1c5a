import PushRelayCalls
import PushRelayCore
import Testing

@testable import PushRelayServer

/// How `CallRoutes` answers a refused call.
@Suite struct CallRoutesTests {
    @Test func anInviteTooLargeForItsProviderIsAnswered413WithTheProviderAndItsLimit() throws {
        var invite = CallInvite(
            notificationUUID: "6f1c",
            callerName: "Alice",
            callerID: "+15551234",
            title: "Call",
            withVideo: false,
            inviteCiphertext: String(repeating: "A", count: 5200),
            iv: "BBBB",
            tag: "CCCC"
        )
        let tooLarge: CallInviteTooLarge
        do {
            _ = try CallInvitePush.apns(invite)
            Issue.record("a 5,200-byte invite fit an APNs VoIP push")
            return
        } catch {
            tooLarge = error
        }
        let answer = CallRoutes.apiError(.inviteTooLarge(size: tooLarge.size, provider: tooLarge.provider, limit: tooLarge.limit))
        #expect(answer.status.code == 413 && answer.errorType == "PayloadTooLarge")
        #expect(
            answer.message
                == "The invite, sealed for the device, becomes a \(tooLarge.size)-byte APNs VoIP payload; APNs VoIP accepts at most 5120 bytes. Send a shorter invite."
        )
        invite.inviteCiphertext = "AAAA"
        #expect(throws: Never.self) { try CallInvitePush.apns(invite) }
    }

    @Test func aTokenTheProviderCallsDeadIsAnswered410WithTheCallersRemedy() {
        let answer = CallRoutes.apiError(.failed(.invalidToken(reason: "Unregistered", message: "APNs reported Unregistered")))
        #expect(answer.status.code == 410 && answer.errorType == "InvalidToken")
        #expect(answer.fields["errorCode"] == .string("Unregistered"))
        #expect(
            answer.message
                == "The device's push token is no longer valid (APNs reported Unregistered); register the device again with its new token."
        )
    }
}
