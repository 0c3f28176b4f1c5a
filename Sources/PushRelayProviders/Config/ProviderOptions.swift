import Foundation
import PushRelayCore

/// Typed access to one provider's option mapping (the YAML under `providers.<name>`, minus `type`).
///
/// Every accessor throws a `ProviderConfigError` naming the key, so a typo in a config file is reported at start-up
/// rather than at the first delivery.
struct ProviderOptions {
    let values: [String: JSONValue]
    let baseDirectory: String?

    /// Rejects keys outside `allowed` (a misspelt `key_fille` must not be silently ignored).
    init(_ values: [String: JSONValue], allowed: Set<String>, baseDirectory: String?, providerType: String) throws(ProviderConfigError) {
        if let unknown = values.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw ProviderConfigError(
                key: unknown,
                problem: "unknown key for a \(providerType) provider (known: \(allowed.sorted().joined(separator: ", ")))"
            )
        }
        self.values = values
        self.baseDirectory = baseDirectory
    }

    func has(_ key: String) -> Bool {
        if case .null? = values[key] { return false }
        return values[key] != nil
    }

    /// A non-empty string, or nil when absent.
    func string(_ key: String) throws(ProviderConfigError) -> String? {
        switch values[key] {
        case nil, .null?: return nil
        case .string(let s)?:
            guard !s.isEmpty else { throw ProviderConfigError(key: key, problem: "must not be empty") }
            return s
        default:
            throw ProviderConfigError(key: key, problem: "must be a string")
        }
    }

    func requiredString(_ key: String, hint: String) throws(ProviderConfigError) -> String {
        guard let s = try string(key) else { throw ProviderConfigError(key: key, problem: "is required: \(hint)") }
        return s
    }

    /// An integer within `range` (numeric strings are accepted, as environment variables are text).
    func int(_ key: String, in range: ClosedRange<Int>) throws(ProviderConfigError) -> Int? {
        let parsed: Int?
        switch values[key] {
        case nil, .null?: return nil
        case .int(let i)?: parsed = Int(exactly: i)
        case .string(let s)?: parsed = Int(s.trimmingCharacters(in: .whitespaces))
        case .double(let d)?: parsed = d == d.rounded() && abs(d) < 1e15 ? Int(d) : nil
        default: parsed = nil
        }
        guard let value = parsed, range.contains(value) else {
            throw ProviderConfigError(key: key, problem: "must be a whole number between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }

    /// A file path, resolved against the config file's directory when relative.
    func path(_ key: String) throws(ProviderConfigError) -> String? {
        guard let raw = try string(key) else { return nil }
        return ProviderOptions.resolve(raw, against: baseDirectory)
    }

    /// The text of the file named by `key`, or nil when the key is absent.
    func fileContents(_ key: String) throws(ProviderConfigError) -> String? {
        guard let path = try path(key) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ProviderConfigError(key: key, problem: "cannot read '\(path)': check that the file exists and is readable by PushRelay")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ProviderConfigError(key: key, problem: "'\(path)' is not UTF-8 text")
        }
        return text
    }

    static func resolve(_ path: String, against base: String?) -> String {
        guard !path.hasPrefix("/"), let base, !base.isEmpty else { return path }
        return base.hasSuffix("/") ? base + path : base + "/" + path
    }
}
