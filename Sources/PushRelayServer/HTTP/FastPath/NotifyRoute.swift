import PushRelayCore

/// A notify route the pipeline answers itself (`NotifyFastPath`): Home Assistant's, for one platform, or the Matrix
/// push gateway's. Both are also the router's routes, which serve them for every other method.
enum NotifyRoute: Sendable, Equatable {
    case homeAssistant(HAPlatform)
    case matrix

    /// The route of a POST to `path` (without its query), or nil for any other path.
    static func route(path: String) -> NotifyRoute? {
        if let platform = HomeAssistantNotifyRoutes.platform(path: path) { return .homeAssistant(platform) }
        if path == MatrixRoutes<PushRelayRequestContext>.path { return .matrix }
        return nil
    }

    /// `android`, `ios` or `matrix`, for logs and tests.
    var label: String {
        switch self {
        case .homeAssistant(let platform): platform.rawValue
        case .matrix: "matrix"
        }
    }
}
