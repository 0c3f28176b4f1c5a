/// How a WebPush message body was encrypted (`Content-Encoding`).
public enum WebPushEncoding: Sendable, Equatable {
    /// RFC 8291/8188: salt and sender key travel inside the body.
    case aes128gcm
    /// The older draft: the sender's key (`Crypto-Key: dh=`) and the salt (`Encryption: salt=`) travel in headers.
    case aesgcm(dh: [UInt8], salt: [UInt8])
}

/// `Urgency` (RFC 8030 §5.3), mapped to the providers' two priorities.
public enum WebPushUrgency: String, Sendable {
    case veryLow = "very-low"
    case low
    case normal
    case high

    /// very-low and low wait for a good moment (APNs 5, FCM normal); everything else is immediate (APNs 10, FCM high).
    public var isImmediate: Bool { self == .normal || self == .high }
}

/// Why a WebPush request cannot be relayed; each case knows its HTTP status.
public enum WebPushHeaderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 415: no or unknown `Content-Encoding`.
    case unsupportedEncoding(String?)
    /// 400: an aesgcm parameter (`dh` in Crypto-Key, `salt` in Encryption) is missing.
    case missingParameter(header: String, parameter: String)
    /// 400: a parameter or header that is present but unusable.
    case invalidValue(header: String, problem: String)

    public var status: Int {
        switch self {
        case .unsupportedEncoding: return 415
        case .missingParameter, .invalidValue: return 400
        }
    }

    public var description: String {
        switch self {
        case .unsupportedEncoding(let e?):
            return "Content-Encoding '\(e)' is not supported; send an RFC 8291 WebPush message with Content-Encoding aes128gcm (or the older aesgcm)."
        case .unsupportedEncoding(nil):
            return "The Content-Encoding header is missing; send an RFC 8291 WebPush message with Content-Encoding aes128gcm (or the older aesgcm)."
        case .missingParameter(let header, let parameter):
            return "Content-Encoding aesgcm needs the '\(parameter)' parameter in the \(header) header (base64url)."
        case .invalidValue(let header, let problem):
            return "The \(header) header \(problem)."
        }
    }
}

/// The RFC 8030 request headers PushRelay relays, parsed from a WebPush POST.
public struct WebPushHeaders: Sendable, Equatable {
    /// The longest `TTL` kept: four weeks, FCM's maximum (APNs keeps notifications for about 30 days).
    public static let maxTTLSeconds = 2_419_200
    /// APNs refuses `apns-collapse-id` values longer than this many bytes.
    public static let maxTopicBytes = 64

    public var encoding: WebPushEncoding
    /// `TTL` in seconds, clamped to `maxTTLSeconds`; nil when the sender gave none.
    public var ttlSeconds: Int?
    public var urgency: WebPushUrgency
    /// `Topic`: replaces an undelivered message with the same topic (APNs collapse id, FCM collapse key). At most
    /// `maxTopicBytes` of visible characters with inner spaces (`HeaderFieldValue`); anything else is refused.
    public var topic: String?
    /// `Unsubscribe-URL`: where to say the subscription is gone (Mastodon sends it).
    public var unsubscribeURL: String?

    /// The TTL PushRelay answers in its `TTL` response header.
    public var acceptedTTL: Int { ttlSeconds ?? Self.maxTTLSeconds }

    public init(
        encoding: WebPushEncoding,
        ttlSeconds: Int? = nil,
        urgency: WebPushUrgency = .normal,
        topic: String? = nil,
        unsubscribeURL: String? = nil
    ) {
        self.encoding = encoding
        self.ttlSeconds = ttlSeconds
        self.urgency = urgency
        self.topic = topic
        self.unsubscribeURL = unsubscribeURL
    }

    /// Parses the headers. `header(name)` looks a header up case-insensitively (given a lower-case name) and joins
    /// repeated fields with `,`.
    public init(header: (String) -> String?) throws(WebPushHeaderError) {
        let rawEncoding = header("content-encoding")?.trimmed
        switch rawEncoding?.lowercased() {
        case "aes128gcm"?:
            encoding = .aes128gcm
        case "aesgcm"?:
            let dh = try Self.parameter("dh", in: header("crypto-key"), header: "Crypto-Key")
            let salt = try Self.parameter("salt", in: header("encryption"), header: "Encryption")
            encoding = .aesgcm(dh: dh, salt: salt)
        case nil, ""?:
            throw .unsupportedEncoding(nil)
        default:
            throw .unsupportedEncoding(rawEncoding)
        }

        if let ttl = header("ttl")?.trimmed, !ttl.isEmpty {
            guard let n = Int(ttl), n >= 0 else { throw .invalidValue(header: "TTL", problem: "must be a whole number of seconds (got '\(ttl)')") }
            ttlSeconds = min(n, Self.maxTTLSeconds)
        } else {
            ttlSeconds = nil
        }

        if let u = header("urgency")?.trimmed.lowercased(), !u.isEmpty {
            // RFC 8030 allows only these four; an unknown value is treated as the default rather than refused.
            urgency = WebPushUrgency(rawValue: u) ?? .normal
        } else {
            urgency = .normal
        }

        if let t = header("topic")?.trimmed, !t.isEmpty {
            guard t.utf8.count <= Self.maxTopicBytes else {
                throw .invalidValue(
                    header: "Topic",
                    problem: "is \(t.utf8.count) bytes; at most \(Self.maxTopicBytes) are relayed (RFC 8030 allows 32 base64url characters)"
                )
            }
            // It becomes the APNs collapse id or the FCM collapse key: a value that every HTTP/2 server accepts.
            if let problem = HeaderFieldValue.problem(t) { throw .invalidValue(header: "Topic", problem: String(problem.dropLast())) }
            topic = t
        } else {
            topic = nil
        }
        let u = header("unsubscribe-url")?.trimmed
        unsubscribeURL = (u?.isEmpty ?? true) ? nil : u
    }

    /// The same as `init(header:)`, as a `Result`.
    public static func parse(header: (String) -> String?) -> Result<WebPushHeaders, WebPushHeaderError> {
        do {
            return .success(try WebPushHeaders(header: header))
        } catch {
            return .failure(error)
        }
    }

    /// Finds `name=value` among parameters separated by `;` or `,` (names case-insensitive, values optionally
    /// quoted) and base64url-decodes the value, padded or not.
    static func parameter(_ name: String, in value: String?, header: String) throws(WebPushHeaderError) -> [UInt8] {
        guard let value else { throw .missingParameter(header: header, parameter: name) }
        for part in value.split(whereSeparator: { $0 == ";" || $0 == "," }) {
            guard let eq = part.firstIndex(of: "=") else { continue }
            let key = part[..<eq].trimmed.lowercased()
            guard key == name else { continue }
            var v = part[part.index(after: eq)...].trimmed
            if v.count >= 2, v.hasPrefix("\""), v.hasSuffix("\"") { v = String(v.dropFirst().dropLast()) }
            guard !v.isEmpty, let bytes = Base64URL.decode(v), !bytes.isEmpty else {
                throw .invalidValue(header: header, problem: "has a '\(name)' parameter that is not base64url")
            }
            return bytes
        }
        throw .missingParameter(header: header, parameter: name)
    }
}

extension StringProtocol {
    var trimmed: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
