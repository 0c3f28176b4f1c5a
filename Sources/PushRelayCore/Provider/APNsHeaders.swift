/// The APNs request headers a caller may set, and what their values may be.
///
/// Everything a caller sends is checked here before it can reach the provider's protocol layer: only Apple's
/// documented request headers pass, with values Apple documents. `apns-topic`, `apns-id` and `authorization` are
/// PushRelay's own (set from the provider's configuration) and are dropped from what a caller sends, as they always
/// were. Any other name (`te`, `connection`, `content-length`, `x-custom`…) or a value outside the rules (every value:
/// `HeaderFieldValue`, so no value can make APNs reset the stream) is the caller's error, answered 400 naming the
/// header; it is never sent and never counted as a provider failure.
public enum APNsHeaders {
    /// The headers a caller may set.
    public static let allowed: Set<String> = ["apns-push-type", "apns-priority", "apns-expiration", "apns-collapse-id"]
    /// The headers PushRelay sets itself; a caller's are ignored.
    public static let owned: Set<String> = ["apns-topic", "apns-id", "authorization"]
    /// The `errorCode` of the 400 for a header that is refused.
    public static let badHeaderReason = "BadHeader"
    /// Apple's `apns-push-type` values.
    public static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets",
    ]
    /// Why `headers` (names in any case) cannot go to APNs, naming the first offending header; nil when they can.
    /// `source` says where the caller put them, for the message (`data.apns_headers`).
    public static func problem(_ headers: [String: String], source: String = "data.apns_headers") -> String? {
        for name in headers.keys.sorted() {
            let lower = name.lowercased()
            guard let value = headers[name] else { continue }
            if owned.contains(lower) { continue }
            guard allowed.contains(lower) else {
                return
                    "\(source): '\(printable(name))' is not an APNs header PushRelay passes on. Allowed: \(allowed.sorted().joined(separator: ", ")) (apns-topic and apns-id are set by PushRelay)."
            }
            if let why = valueProblem(lower, value) {
                return "\(source): \(lower) \(why)"
            }
        }
        return nil
    }

    /// The caller's headers without PushRelay's own, names lower-cased. Call `problem(_:)` first.
    public static func passed(_ headers: [String: String]) -> [String: String] {
        var out: [String: String] = [:]
        for (name, value) in headers {
            let lower = name.lowercased()
            if allowed.contains(lower) { out[lower] = value }
        }
        return out
    }

    /// Apple's limit on `apns-collapse-id`, in bytes.
    public static let collapseIDLimit = 64

    /// Every value first passes `HeaderFieldValue` (visible characters, no leading or trailing space, not empty; a collapse id
    /// at most `collapseIDLimit` bytes), then Apple's own rule for its header.
    private static func valueProblem(_ name: String, _ value: String) -> String? {
        if let problem = HeaderFieldValue.problem(value, maxBytes: name == "apns-collapse-id" ? collapseIDLimit : nil) {
            return problem
        }
        switch name {
        case "apns-push-type":
            return pushTypes.contains(value) ? nil : "must be one of \(pushTypes.sorted().joined(separator: ", "))."
        case "apns-priority":
            return ["1", "5", "10"].contains(value) ? nil : "must be 1, 5 or 10."
        case "apns-expiration":
            return !value.isEmpty && value.utf8.count <= 10 && value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
                ? nil
                : "must be a UNIX time in seconds (digits only), or 0."
        default:
            return nil
        }
    }

    /// A header name as a message may quote it: control characters shown as `?`, at most 64 characters.
    private static func printable(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.prefix(64).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }
}
