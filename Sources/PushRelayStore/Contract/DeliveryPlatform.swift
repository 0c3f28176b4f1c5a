import PushRelayCore

/// What a delivery was for, as the delivery log keeps it (`delivery_log.platform`): a Home Assistant platform, or a
/// Matrix pusher's payload format (`matrix-fcm`, `matrix-apns`, `matrix-webpush`). Any other value is none of them.
public enum DeliveryPlatform: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    case homeAssistant(HAPlatform)
    case matrix(format: MatrixFormat.Kind)

    public init(_ platform: HAPlatform) { self = .homeAssistant(platform) }

    public init?(rawValue: String) {
        if let platform = HAPlatform(rawValue: rawValue) {
            self = .homeAssistant(platform)
        } else if rawValue.hasPrefix("matrix-"), let format = MatrixFormat.Kind(rawValue: String(rawValue.dropFirst(7))) {
            self = .matrix(format: format)
        } else {
            return nil
        }
    }

    public var rawValue: String {
        switch self {
        case .homeAssistant(let platform): platform.rawValue
        case .matrix(let format): "matrix-\(format.rawValue)"
        }
    }

    public var description: String { rawValue }
}
