import PushRelayConfiguration
import PushRelayCore
import PushRelayTestHarness

/// Loads `yaml` as a config file, with `env` as the environment.
func loadConfig(_ yaml: String, env: [String: String] = [:]) throws -> PushRelayConfig {
    let file = TempPath.make() + ".yaml"
    try yaml.write(toFile: file, atomically: true, encoding: .utf8)
    return try PushRelayConfig.load(file: file, environment: env)
}

/// What a config reader says about its input: `key: problem` for a `ConfigError`, else "accepted" (or the other error).
func configProblem(_ read: () throws -> Void) -> String {
    do {
        try read()
        return "accepted"
    } catch let e as ConfigError {
        return e.key + ": " + e.problem
    } catch {
        return "\(error)"
    }
}

/// What `PushRelayConfig(tree:)` says about `tree` (see `configProblem(_:)`).
func configProblem(_ tree: [String: JSONValue]) -> String {
    configProblem { _ = try PushRelayConfig(tree: tree) }
}
