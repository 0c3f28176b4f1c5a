import Logging
import PushRelayHTTP

extension PushRelayConfig {
    static let logKeys: [ConfigKey] = ["level", "format"]

    /// Reads `log.level` (any case); nil when not set.
    package static func logLevel(reading r: ConfigTreeReader) throws -> Logger.Level? {
        guard let v = try r.string("log.level") else { return nil }
        guard let level = Logger.Level(rawValue: v.lowercased()) else {
            throw ConfigError(key: "log.level", problem: "must be one of trace, debug, info, notice, warning, error, critical; got '\(v)'")
        }
        return level
    }

    /// Reads `log.format` (any case); nil when not set.
    package static func logFormat(reading r: ConfigTreeReader) throws -> LogFormat? {
        guard let v = try r.string("log.format") else { return nil }
        guard let format = LogFormat(rawValue: v.lowercased()) else {
            throw ConfigError(key: "log.format", problem: "must be text or json; got '\(v)'")
        }
        return format
    }
}
