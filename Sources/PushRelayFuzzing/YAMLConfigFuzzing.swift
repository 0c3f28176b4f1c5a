import PushRelayConfiguration
import PushRelayCore

/// The configuration file: YAML to a tree, then the validated configuration. Every bad file is a `ConfigError`.
enum YAMLConfigFuzzing {
    static func run(_ bytes: [UInt8]) {
        guard bytes.count <= 64 * 1024 else { return }
        guard case .object(let tree)? = try? YAMLTree.parse(String(decoding: bytes, as: UTF8.self), source: "fuzz.yaml") else { return }
        _ = try? PushRelayConfig(tree: tree, baseDirectory: "/nonexistent-pushrelay-fuzz")
    }
}
