/// Where a `/relay-to/…` URL sends a WebPush message.
public struct RelayTarget: Sendable, Equatable {
    public enum Destination: Sendable, Equatable {
        /// APNs, production (`api.push.apple.com`) or development (`api.sandbox.push.apple.com`).
        case apns(production: Bool)
        case fcm
    }

    public var destination: Destination
    /// The device token: hex for APNs, the FCM registration token otherwise.
    public var token: String
    /// The rest of the path after the token, relayed to the app as `x`; nil when there is none.
    public var extra: String?

    public init(destination: Destination, token: String, extra: String? = nil) {
        self.destination = destination
        self.token = token
        self.extra = extra
    }

    /// Parses the path of `/relay-to/{production|development|fcm}/{token}[/{extra...}]`. Returns a message for
    /// the 400 answer when it is not such a path.
    public static func parse(path: String) -> Result<RelayTarget, RelayPathError> {
        var rest = Substring(path)
        guard rest.hasPrefix("/relay-to/") else { return .failure(.init(message: "Relay paths start with /relay-to/.")) }
        rest = rest.dropFirst("/relay-to/".count)
        let parts = rest.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2 else {
            return .failure(
                .init(message: "Use /relay-to/{production|development}/{apns device token}[/extra] or /relay-to/fcm/{fcm token}[/extra].")
            )
        }
        let destination: Destination
        switch parts[0] {
        case "production": destination = .apns(production: true)
        case "development", "sandbox": destination = .apns(production: false)
        case "fcm": destination = .fcm
        default:
            return .failure(.init(message: "Unknown relay environment '\(parts[0])': use production, development or fcm."))
        }
        var token = String(parts[1])
        guard !token.isEmpty else { return .failure(.init(message: "The device token is missing from the relay path.")) }
        if case .apns = destination {
            if let problem = APNsDeviceToken.problem(token) {
                return .failure(.init(message: problem, errorType: DeliveryFailure.malformedToken))
            }
            token = PushTokenIdentity.canonical(token)
        } else {
            guard token.count <= 4096, token.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                return .failure(
                    .init(message: "The FCM token in the relay path is not a registration token.", errorType: DeliveryFailure.malformedToken)
                )
            }
        }
        let extra = parts.count > 2 && !parts[2].isEmpty ? String(parts[2]) : nil
        return .success(RelayTarget(destination: destination, token: token, extra: extra))
    }
}

public struct RelayPathError: Error, Sendable, Equatable {
    public var message: String
    /// `MalformedToken` when the path is fine but its token cannot be one; `InvalidRequest` otherwise.
    public var errorType: String

    public init(message: String, errorType: String = "InvalidRequest") {
        self.message = message
        self.errorType = errorType
    }
}
