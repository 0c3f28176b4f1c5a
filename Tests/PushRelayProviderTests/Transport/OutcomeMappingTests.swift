import Foundation
import NIOHTTP1
import PushRelayCore
import Testing

@testable import PushRelayProviders

/// The pure answer → outcome mappings, on answers the fakes do not produce.
@Suite struct OutcomeMappingTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func response(_ status: Int, _ body: String = "", headers: [(String, String)] = []) -> UpstreamResponse {
        UpstreamResponse(status: status, headers: HTTPHeaders(headers), body: Array(body.utf8))
    }

    func fcm(_ r: UpstreamResponse) -> Result<DeliveryReceipt, DeliveryFailure> {
        FCMOutcome.interpret(r, sentMessage: ["token": "t"], pushToken: "tokentokentokentokentoken", projectID: "p", providerName: "fcm", now: now)
    }

    func apns(_ r: UpstreamResponse) -> Result<DeliveryReceipt, DeliveryFailure> {
        let request = APNsPreparedRequest(
            path: "/3/device/ab",
            deviceToken: String(repeating: "ab", count: 32),
            headers: ["apns-id": "x", "apns-topic": "t"],
            payload: ["aps": [:]],
            body: []
        )
        return APNsOutcome.interpret(r, request: request, environment: "production", providerName: "apns", now: now)
    }

    @Test func fcmEdgeCases() throws {
        // Success without a name still succeeds.
        #expect(try fcm(response(200, "")).get().messageID == "fcm:unnamed")
        // A 404 without UNREGISTERED is a wrong endpoint/project, not a dead token.
        guard case .failure(.configuration) = fcm(response(404, "<html>Not Found</html>")) else {
            Issue.record("404 html")
            return
        }
        // Unparseable 5xx bodies are transient; Retry-After as an HTTP date.
        guard case .failure(.transient(_, _, let after)) = fcm(response(502, "garbage", headers: [("Retry-After", "Fri, 15 Jan 2027 08:00:30 GMT")]))
        else {
            Issue.record("502")
            return
        }
        #expect(after == 30)
        // A 401 reaching the mapper (after the retry) is a configuration error.
        guard case .failure(.configuration) = fcm(response(401, #"{"error":{"code":401,"status":"UNAUTHENTICATED"}}"#)) else {
            Issue.record("401")
            return
        }
        // Other 403s are configuration too.
        guard case .failure(.configuration(let m)) = fcm(response(403, #"{"error":{"code":403,"status":"PERMISSION_DENIED","message":"denied"}}"#))
        else {
            Issue.record("403")
            return
        }
        #expect(m.contains("PERMISSION_DENIED"))
        // 3xx: not a payload problem.
        guard case .failure(.transient) = fcm(response(302)) else {
            Issue.record("302")
            return
        }
    }

    @Test func fcmErrorBodyParsing() {
        let body = FCMErrorBody(
            json: try? JSONParser.parse(
                #"""
                {"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT","details":[
                  {"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.data[0].value","description":"Invalid value"}]},
                  {"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"}]}}
                """#
            )
        )
        #expect(body.reason == "INVALID_ARGUMENT")
        #expect(body.fieldViolations == ["message.data[0].value: Invalid value"])
        #expect(FCMErrorBody(json: .array([1, 2])).reason == nil)
        #expect(FCMErrorBody(json: ["error": ["details": "nope"]]).reason == nil)
    }

    @Test func apnsEdgeCases() throws {
        #expect(try apns(response(200, "", headers: [("apns-id", "from-apple")])).get().messageID == "from-apple")
        #expect(try apns(response(200)).get().messageID == "x")
        guard case .failure(.invalidToken(let reason, _)) = apns(response(410, "")) else {
            Issue.record("410 no body")
            return
        }
        #expect(reason == "HTTP 410")
        guard case .failure(.configuration) = apns(response(400, "not json")) else {
            Issue.record("400 garbage")
            return
        }
        guard case .failure(.transient(let r429, _, _)) = apns(response(429, #"{"reason":"TooManyProviderTokenUpdates"}"#)) else {
            Issue.record("429")
            return
        }
        #expect(r429 == "TooManyProviderTokenUpdates")
        guard case .failure(.configuration(let m)) = apns(response(403, #"{"reason":"ExpiredProviderToken"}"#)) else {
            Issue.record("403")
            return
        }
        #expect(m.contains("clock"))
        guard case .failure(.transient) = apns(response(502, "<html>")) else {
            Issue.record("502")
            return
        }
        #expect(APNsErrorReason(rawValue: "Unregistered").meansInvalidToken)
        #expect(!APNsErrorReason.tooManyRequests.meansInvalidToken)
    }

    @Test func retryAfterParsing() {
        #expect(RetryAfter.seconds("120", now: now) == 120)
        #expect(RetryAfter.seconds(" 5 ", now: now) == 5)
        #expect(RetryAfter.seconds("-3", now: now) == 0)
        #expect(RetryAfter.seconds("999999999", now: now) == 86_400)
        #expect(RetryAfter.seconds("soon", now: now) == nil)
        #expect(RetryAfter.seconds(nil, now: now) == nil)
    }

    @Test func apnsTopicsPerPushType() {
        #expect(APNsPushType.topic(bundleID: "a.b", pushType: "alert") == "a.b")
        #expect(APNsPushType.topic(bundleID: "a.b", pushType: "background") == "a.b")
        #expect(APNsPushType.topic(bundleID: "a.b", pushType: "voip") == "a.b.voip")
        #expect(APNsPushType.topic(bundleID: "a.b", pushType: "liveactivity") == "a.b.push-type.liveactivity")
        #expect(APNsPushType.payloadLimit(pushType: "voip") == 5120)
        #expect(APNsPushType.payloadLimit(pushType: "alert") == 4096)
    }
}
