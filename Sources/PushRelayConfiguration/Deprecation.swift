/// A config key read under an older name: the server logs it at start, so the file can be updated.
public struct Deprecation: Sendable, Equatable {
    public var key: String
    public var replacement: String

    public init(key: String, replacement: String) {
        self.key = key
        self.replacement = replacement
    }
}
