import Foundation
import Testing

@testable import PushRelayCore

@Suite struct HARequestParsingTests {
    @Test func readsAllFieldsAndToleratesExtraKeys() throws {
        let n = try HANotification(body: [
            "message": "hi", "title": "t", "push_token": "a:b", "hass_confirm_id": "c1", "live_activity_token": "la",
            "registration_info": ["app_id": "io.x", "app_version": "1", "os_version": "17", "webhook_id": "w"],
            "data": ["k": [1, 2]], "unknown": true,
        ])
        #expect(n.message == "hi" && n.title == "t" && n.pushToken == "a:b" && n.hassConfirmID == "c1" && n.liveActivityToken == "la")
        #expect(n.registrationInfo == HARegistrationInfo(appID: "io.x", appVersion: "1", osVersion: "17", webhookID: "w"))
        #expect(n.data == ["k": [1, 2]])
    }

    @Test func messageMayBeMissing() throws {
        let n = try HANotification(body: ["push_token": "a:b", "trigger": ["id": "x"]])
        #expect(n.message == nil && n.data.isEmpty)
    }

    @Test func reportsWhatIsWrong() {
        func error(_ body: JSONValue) -> HARequestError? {
            do {
                _ = try HANotification(body: body)
                return nil
            } catch { return error }
        }
        #expect(error([1]) == .malformedBody("The request body must be a JSON object."))
        #expect(error(["message": "x"]) == .missingPushToken)
        #expect(error(["push_token": ""]) == .missingPushToken)
        #expect(error(["push_token": 5]) == .wrongType(field: "push_token", expected: "a string"))
        #expect(error(["push_token": "a", "data": "x"]) == .wrongType(field: "data", expected: "an object"))
        #expect(error(["push_token": "a", "message": ["x"]]) == .wrongType(field: "message", expected: "a string"))
        #expect(
            error(["push_token": "a", "registration_info": ["app_id": 3]]) == .wrongType(field: "registration_info.app_id", expected: "a string")
        )
        for e in [HARequestError.missingPushToken, .malformedBody("x"), .wrongType(field: "f", expected: "y")] {
            #expect(!e.description.isEmpty)
        }
    }
}
