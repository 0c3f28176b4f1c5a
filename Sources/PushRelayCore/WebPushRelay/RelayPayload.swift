import Foundation

/// Builds the APNs and FCM forms of a relayed WebPush message, the way toot-relay and Mastodon's relays do, so apps
/// written for those relays decrypt PushRelay's pushes unchanged.
///
/// - APNs: `{"aps":{"alert":<alert text>,"mutable-content":1,"content-available":1},"p":…,"k":…,"s":…,"x":…}`
/// - FCM: `data` `{p,k,s,x}` (aesgcm) or `{p,rfc:"1",x}` (aes128gcm), `notification.title` = alert text.
///
/// `p` is the encrypted body, `k` the sender's ECDH key and `s` the salt (aesgcm only), all extended Z85; `x` is the
/// path's extra part.
public enum RelayPayload {
    /// APNs' limit for alert pushes, in bytes of JSON.
    public static let apnsLimit = 4096
    /// FCM's limit for a message's payload: data keys and values plus the notification fields.
    public static let fcmLimit = 4096

    /// The app-visible fields common to both providers.
    public static func fields(body: [UInt8], encoding: WebPushEncoding, extra: String?) -> [(String, String)] {
        var f: [(String, String)] = [("p", ExtendedZ85.encode(body))]
        switch encoding {
        case .aes128gcm:
            break
        case .aesgcm(let dh, let salt):
            f.append(("k", ExtendedZ85.encode(dh)))
            f.append(("s", ExtendedZ85.encode(salt)))
        }
        if let extra { f.append(("x", extra)) }
        return f
    }

    /// The direct APNs request. `now` turns `TTL` into `apns-expiration`; TTL 0 means "now or never" (expiration 0).
    public static func apns(
        body: [UInt8],
        headers h: WebPushHeaders,
        extra: String?,
        alertText: String,
        now: Date
    ) throws(RelayPayloadError) -> TranslatedNotification {
        var payload: [String: JSONValue] = [
            "aps": ["alert": .string(alertText), "mutable-content": 1, "content-available": 1]
        ]
        for (k, v) in fields(body: body, encoding: h.encoding, extra: extra) { payload[k] = .string(v) }
        var headers: [String: String] = [
            "apns-push-type": "alert",
            "apns-priority": h.urgency.isImmediate ? "10" : "5",
        ]
        if let ttl = h.ttlSeconds {
            headers["apns-expiration"] = ttl == 0 ? "0" : String(Int64(now.timeIntervalSince1970) + Int64(ttl))
        }
        if let topic = h.topic { headers["apns-collapse-id"] = topic }
        let size = JSONWriter.bytes(.object(payload)).count
        guard size <= apnsLimit else { throw RelayPayloadError(size: size, limit: apnsLimit, provider: "APNs", bodyBytes: body.count) }
        return TranslatedNotification(fcmMessage: .object([:]), apns: APNsRequest(headers: headers, payload: .object(payload)))
    }

    /// The FCM HTTP v1 `message`.
    public static func fcm(
        token: String,
        body: [UInt8],
        headers h: WebPushHeaders,
        extra: String?,
        alertText: String
    ) throws(RelayPayloadError) -> TranslatedNotification {
        var data: [String: JSONValue] = [:]
        var size = alertText.utf8.count + "title".utf8.count
        for (k, v) in fields(body: body, encoding: h.encoding, extra: extra) {
            data[k] = .string(v)
            size += k.utf8.count + v.utf8.count
        }
        if h.encoding == .aes128gcm {
            data["rfc"] = "1"
            size += 4
        }
        guard size <= fcmLimit else { throw RelayPayloadError(size: size, limit: fcmLimit, provider: "FCM", bodyBytes: body.count) }
        var android: [String: JSONValue] = ["priority": .string(h.urgency.isImmediate ? "high" : "normal")]
        if let ttl = h.ttlSeconds { android["ttl"] = .string("\(ttl)s") }
        if let topic = h.topic { android["collapse_key"] = .string(topic) }
        let message: JSONValue = [
            "token": .string(token),
            "data": .object(data),
            "notification": ["title": .string(alertText)],
            "android": .object(android),
            "apns": ["payload": ["aps": ["mutable-content": 1, "content-available": 1]]],
        ]
        return TranslatedNotification(fcmMessage: message)
    }
}

/// The relayed message cannot fit the provider's limit once encoded (413).
public struct RelayPayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var size: Int
    public var limit: Int
    public var provider: String
    public var bodyBytes: Int

    public var description: String {
        "The \(bodyBytes)-byte WebPush body becomes a \(size)-byte \(provider) payload once encoded; \(provider) accepts at most \(limit) bytes."
    }
}
