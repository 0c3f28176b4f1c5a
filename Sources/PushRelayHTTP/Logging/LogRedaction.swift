import PushRelayCore

/// What a log line may say about a request path. Push tokens travel in paths (`/admin/v1/quotas/{token}`,
/// `/relay-to/fcm/{token}`), so every segment that is not one of PushRelay's own route words is shortened the way
/// push tokens always are in logs (`TokenDisplay.short`). Query strings are dropped.
package enum LogRedaction {
    /// The fixed words of PushRelay's routes; any other segment may be a credential.
    static let routeWords: Set<String> = [
        "api", "sendPush", "android", "iOS", "v1", "sendPushNotification", "checkRateLimits", "health", "ready", "metrics",
        "admin", "quotas", "limits", "relay-to", "production", "development", "sandbox", "fcm", "_health", "messages",
        "_matrix", "push", "notify", "websocket", "calls", "devices", "rotate-key", "openapi.yaml", "openapi.json",
    ]

    /// `path` with every segment that is not a route word shortened: `/relay-to/fcm/abcdef…uvwxyz`.
    package static func path(_ path: String) -> String {
        let bare = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return bare.split(separator: "/", omittingEmptySubsequences: false)
            .map { segment in segment.isEmpty || routeWords.contains(String(segment)) ? String(segment) : TokenDisplay.short(String(segment)) }
            .joined(separator: "/")
    }
}
