import PushRelayCore
import Yams

/// Turns YAML text into a `JSONValue` tree, resolving scalars by their YAML 1.1 core tags.
package enum YAMLTree {
    package static func parse(_ text: String, source: String) throws -> JSONValue {
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw ConfigError(key: "", problem: "\(source) is not valid YAML: \(error)")
        }
        guard let node else { return .null }
        return try convert(node, path: "")
    }

    private static func convert(_ node: Node, path: String) throws -> JSONValue {
        switch node {
        case .scalar(let scalar):
            switch Tag.Name(rawValue: node.tag.rawValue) {
            case .null: return .null
            case .bool: return node.bool.map(JSONValue.bool) ?? .string(scalar.string)
            case .int: return node.int.map { .int(Int64($0)) } ?? .string(scalar.string)
            case .float: return node.float.map(JSONValue.double) ?? .string(scalar.string)
            default: return .string(scalar.string)
            }
        case .mapping(let mapping):
            var o: [String: JSONValue] = [:]
            for (k, v) in mapping {
                guard case .scalar(let key) = k else { throw ConfigError(key: path, problem: "mapping keys must be plain strings") }
                let sub = path.isEmpty ? key.string : "\(path).\(key.string)"
                o[key.string] = try convert(v, path: sub)
            }
            return .object(o)
        case .sequence(let seq):
            return .array(try seq.enumerated().map { try convert($0.element, path: "\(path)[\($0.offset)]") })
        case .alias:
            throw ConfigError(key: path, problem: "YAML aliases are not supported")
        }
    }
}
