import PushRelayCore

/// Typed access to a parsed configuration tree, with errors that name the key.
package struct ConfigTreeReader {
    package let tree: [String: JSONValue]

    package init(tree: [String: JSONValue]) {
        self.tree = tree
    }

    package func value(_ key: String) -> JSONValue? {
        var node: JSONValue = .object(tree)
        for part in key.split(separator: ".") {
            guard case .object(let o) = node, let next = o[String(part)] else { return nil }
            node = next
        }
        if case .null = node { return nil }
        return node
    }

    /// Whether the tree sets `key` (to anything but null).
    package func has(_ key: String) -> Bool { value(key) != nil }

    func checkUnknownKeys(_ known: [String: Set<String>]) throws {
        for key in tree.keys.sorted() where !(known[""]!.contains(key)) {
            throw ConfigError(key: key, problem: "unknown key (known: \(known[""]!.sorted().joined(separator: ", ")))")
        }
        for section in known.keys.sorted() where !section.isEmpty {
            let keys = known[section]!
            guard let v = tree[section] else { continue }
            if case .null = v { continue }
            guard case .object(let o) = v else { throw ConfigError(key: section, problem: "must be a mapping") }
            for key in o.keys.sorted() where !keys.contains(key) {
                throw ConfigError(key: "\(section).\(key)", problem: "unknown key (known: \(keys.sorted().joined(separator: ", ")))")
            }
        }
    }

    package func string(_ key: String) throws -> String? {
        guard let v = value(key) else { return nil }
        switch v {
        case .string(let s): return s
        case .int(let i): return String(i)
        default: throw ConfigError(key: key, problem: "must be a string")
        }
    }

    package func int(_ key: String, range: ClosedRange<Int>) throws -> Int? {
        guard let v = value(key) else { return nil }
        let n: Int?
        switch v {
        case .int(let i): n = Int(exactly: i)
        case .string(let s): n = Int(s)
        default: n = nil
        }
        guard let n, range.contains(n) else {
            throw ConfigError(key: key, problem: "must be a whole number from \(range.lowerBound) to \(range.upperBound); got \(v.jsonString())")
        }
        return n
    }

    package func double(_ key: String) throws -> Double? {
        guard let v = value(key) else { return nil }
        switch v {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .string(let s):
            guard let d = Double(s) else { throw ConfigError(key: key, problem: "must be a number; got \(v.jsonString())") }
            return d
        default: throw ConfigError(key: key, problem: "must be a number; got \(v.jsonString())")
        }
    }

    package func bool(_ key: String) throws -> Bool? {
        guard let v = value(key) else { return nil }
        switch v {
        case .bool(let b): return b
        case .string(let s) where ["true", "false"].contains(s.lowercased()): return s.lowercased() == "true"
        default: throw ConfigError(key: key, problem: "must be true or false; got \(v.jsonString())")
        }
    }

    /// A duration in milliseconds, written as whole seconds (`3600`) or with a unit (`500ms`, `90s`, `30m`, `24h`, `7d`).
    func durationMs(_ key: String) throws -> Int64? {
        guard let v = try string(key) else { return nil }
        guard let ms = DurationText.milliseconds(v) else {
            throw ConfigError(key: key, problem: "must be a duration such as 3600 (seconds), 90m, 24h or 7d; got '\(v)'")
        }
        return ms
    }

    package func object(_ key: String) throws -> [String: JSONValue]? {
        guard let v = value(key) else { return nil }
        guard case .object(let o) = v else { throw ConfigError(key: key, problem: "must be a mapping") }
        return o
    }

    package func array(_ key: String) throws -> [JSONValue]? {
        guard let v = value(key) else { return nil }
        guard case .array(let a) = v else { throw ConfigError(key: key, problem: "must be a list") }
        return a
    }
}
