import Crypto
import Foundation
import PushRelayCore

/// The request rules the fake APNs enforces, in the order APNs reports them. Pure: given a request and the
/// verifier's settings, the first problem as `(status, reason)`, or nil when the request is acceptable.
enum FakeAPNsRules {
    static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets",
    ]

    struct Rejection: Error, Equatable {
        var status: Int
        var reason: String
    }

    /// `/3/device/<hex token>` → the token.
    static func deviceToken(in path: String) throws(Rejection) -> String {
        let prefix = "/3/device/"
        guard path.hasPrefix(prefix) else { throw Rejection(status: 404, reason: "BadPath") }
        let token = String(path.dropFirst(prefix.count))
        guard !token.isEmpty else { throw Rejection(status: 400, reason: "MissingDeviceToken") }
        guard token.count >= 64, token.allSatisfy({ "0123456789abcdef".contains($0) }) else {
            throw Rejection(status: 400, reason: "BadDeviceToken")
        }
        return token
    }

    /// Headers and payload (everything but authentication).
    static func checkHeadersAndPayload(_ r: FakeRequest, bundleID: String) throws(Rejection) {
        for name in Set(r.headerFields.map(\.name)) where name.hasPrefix("apns-") && r.count(of: name) > 1 {
            throw Rejection(status: 400, reason: "DuplicateHeaders")
        }
        guard let pushType = r.header("apns-push-type") else { throw Rejection(status: 400, reason: "InvalidPushType") }
        guard pushTypes.contains(pushType) else { throw Rejection(status: 400, reason: "InvalidPushType") }
        guard let topic = r.header("apns-topic") else { throw Rejection(status: 400, reason: "MissingTopic") }
        guard topic == expectedTopic(bundleID: bundleID, pushType: pushType) else {
            throw Rejection(status: 400, reason: topic.hasPrefix(bundleID) ? "BadTopic" : "TopicDisallowed")
        }
        let priority = r.header("apns-priority")
        if let priority, !["1", "5", "10"].contains(priority) { throw Rejection(status: 400, reason: "BadPriority") }
        if let id = r.header("apns-id"), !isCanonicalUUID(id) { throw Rejection(status: 400, reason: "BadMessageId") }
        if let exp = r.header("apns-expiration"), Int64(exp) == nil { throw Rejection(status: 400, reason: "BadExpirationDate") }
        if let collapse = r.header("apns-collapse-id"), collapse.utf8.count > 64 { throw Rejection(status: 400, reason: "BadCollapseId") }

        guard !r.body.isEmpty else { throw Rejection(status: 400, reason: "PayloadEmpty") }
        let limit = pushType == "voip" ? 5120 : 4096
        guard r.body.count <= limit else { throw Rejection(status: 413, reason: "PayloadTooLarge") }
        guard case .object(let payload)? = r.json, case .object(let aps)? = payload["aps"] else {
            throw Rejection(status: 400, reason: "BadPayload")
        }
        switch pushType {
        case "background":
            guard priority == "5" else { throw Rejection(status: 400, reason: "BadPriority") }
            let contentAvailable = aps["content-available"]
            guard contentAvailable == .int(1), Set(aps.keys).isSubset(of: ["content-available", "badge"]) else {
                throw Rejection(status: 400, reason: "InvalidPushType")
            }
        case "liveactivity":
            guard aps["event"]?.stringValue != nil, aps["timestamp"] != nil else { throw Rejection(status: 400, reason: "InvalidPushType") }
        default:
            break
        }
    }

    static func expectedTopic(bundleID: String, pushType: String) -> String {
        switch pushType {
        case "voip": return bundleID + ".voip"
        case "complication": return bundleID + ".complication"
        case "fileprovider": return bundleID + ".pushkit.fileprovider"
        case "liveactivity": return bundleID + ".push-type.liveactivity"
        default: return bundleID
        }
    }

    /// Lower-case `8-4-4-4-12` hex.
    static func isCanonicalUUID(_ s: String) -> Bool {
        let groups = s.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return false }
        return groups.allSatisfy { $0.allSatisfy { "0123456789abcdef".contains($0) } }
    }

    /// The provider JWT: ES256 signature by the configured key, `kid`, `iss`, whole-second `iat`, at most 1 h old.
    /// Returns the token string (for change counting).
    static func checkProviderToken(
        _ r: FakeRequest,
        keyID: String,
        teamID: String,
        publicKey: P256.Signing.PublicKey,
        now: Date
    ) throws(Rejection) -> String {
        guard let auth = r.header("authorization") else { throw Rejection(status: 403, reason: "MissingProviderToken") }
        guard auth.lowercased().hasPrefix("bearer ") else { throw Rejection(status: 403, reason: "InvalidProviderToken") }
        let token = String(auth.dropFirst(7))
        guard let jwt = InspectedJWT(token), jwt.verifiesES256(with: publicKey) else {
            throw Rejection(status: 403, reason: "InvalidProviderToken")
        }
        guard jwt.header["kid"]?.stringValue == keyID, jwt.claims["iss"]?.stringValue == teamID,
            let iat = jwt.wholeSeconds("iat")
        else { throw Rejection(status: 403, reason: "InvalidProviderToken") }
        if now.timeIntervalSince1970 - Double(iat) > 3600 { throw Rejection(status: 403, reason: "ExpiredProviderToken") }
        return token
    }
}
