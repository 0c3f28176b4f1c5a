extension PushRelayConfig {
    static let iosKeys: [ConfigKey] = ["companion_app_ids"]

    /// Reads `ios.companion_app_ids`: the app-id globs that get the Home Assistant companion app's iOS translation.
    /// Nil when not set.
    package static func iosCompanionAppIDs(reading r: ConfigTreeReader) throws -> [String]? {
        guard let ids = try r.array("ios.companion_app_ids") else { return nil }
        return try ids.enumerated().map { (k, v) in
            guard case .string(let s) = v, !s.isEmpty else {
                throw ConfigError(key: "ios.companion_app_ids[\(k)]", problem: "must be a non-empty string")
            }
            return s
        }
    }
}
