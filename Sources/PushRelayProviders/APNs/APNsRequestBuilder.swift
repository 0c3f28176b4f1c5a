import PushRelayCore

/// An APNs request ready to send (and to re-send unchanged, same `apns-id`, after a provider-token renewal).
struct APNsPreparedRequest: Sendable {
    /// `/3/device/<hex token>`.
    var path: String
    /// The device (or Live Activity) token the path addresses.
    var deviceToken: String
    /// Every `apns-*` header, `apns-topic` and `apns-id` included (not `authorization`).
    var headers: [String: String]
    var payload: JSONValue
    var body: [UInt8]

    /// What the receipt records as sent: `{"headers": {...}, "payload": {...}}`.
    var sentPayload: JSONValue {
        ["headers": .object(headers.mapValues(JSONValue.string)), "payload": payload]
    }
}

/// Turns a translated notification into an APNs request, refusing what APNs would refuse before anything is sent.
enum APNsRequestBuilder {
    static func prepare(_ delivery: Delivery, bundleID: String, apnsID: String, providerName: String) throws(DeliveryFailure) -> APNsPreparedRequest {
        guard let apns = delivery.notification.apns else {
            throw .configuration(
                message:
                    "\(providerName) is an APNs provider, but this notification has no APNs form (it came from the Android endpoint). Route app '\(delivery.appID ?? "?")' to an fcm provider."
            )
        }
        let pushType = apns.headers["apns-push-type"] ?? "alert"
        let target: String
        if pushType == "liveactivity", let activityToken = delivery.notification.fcmMessage["apns"]?["live_activity_token"]?.stringValue {
            target = activityToken
        } else {
            target = delivery.pushToken
        }
        let deviceToken = PushTokenIdentity.canonical(target)
        if let problem = APNsDeviceToken.problem(deviceToken) {
            throw .invalidTarget(
                reason: DeliveryFailure.malformedToken,
                message: problem + " (app '\(delivery.appID ?? "?")' is routed to \(providerName))"
            )
        }

        var headers = APNsHeaders.passed(apns.headers)
        // A collapse id too long for Apple keeps Apple's own reason; every other refused value is `BadHeader`.
        if let collapse = headers["apns-collapse-id"], collapse.utf8.count > APNsPushType.collapseIDLimit {
            throw .invalidPayload(
                reason: "BadCollapseId",
                message:
                    "apns-collapse-id (the notification's tag/collapse id) is \(collapse.utf8.count) bytes; APNs allows at most \(APNsPushType.collapseIDLimit). Use a shorter tag."
            )
        }
        if let problem = APNsHeaders.problem(apns.headers, source: "APNs headers") {
            throw .invalidPayload(reason: APNsHeaders.badHeaderReason, message: problem)
        }
        headers["apns-push-type"] = pushType
        headers["apns-topic"] = APNsPushType.topic(bundleID: bundleID, pushType: pushType)
        headers["apns-id"] = apnsID
        let body = JSONWriter.bytes(apns.payload)
        let limit = APNsPushType.payloadLimit(pushType: pushType)
        if body.count > limit {
            throw .payloadTooLarge(
                message:
                    "The APNs payload is \(body.count) bytes; APNs accepts at most \(limit) bytes for \(pushType) pushes. Shorten the message or its data."
            )
        }
        return APNsPreparedRequest(path: "/3/device/\(deviceToken)", deviceToken: deviceToken, headers: headers, payload: apns.payload, body: body)
    }
}
