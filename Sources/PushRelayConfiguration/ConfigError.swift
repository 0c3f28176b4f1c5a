/// A configuration problem, naming the key so the admin can fix it.
public struct ConfigError: Error, CustomStringConvertible, Sendable {
    public var key: String
    public var problem: String

    public init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { key.isEmpty ? "invalid configuration: \(problem)" : "invalid configuration: \(key): \(problem)" }
}
