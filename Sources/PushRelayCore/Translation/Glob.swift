/// A minimal shell-style glob: `*` matches any run of characters (including none), `?` exactly one character,
/// everything else itself. Case-sensitive; no character classes or escapes.
public struct Glob: Sendable, Hashable {
    public let pattern: String
    private let chars: [Character]

    public init(_ pattern: String) {
        self.pattern = pattern
        self.chars = Array(pattern)
    }

    public func matches(_ s: String) -> Bool {
        let text = Array(s)
        var p = 0, t = 0
        // Position of the last `*` seen and the text position it was tried against, for backtracking.
        var star: Int? = nil
        var starText = 0
        while t < text.count {
            if p < chars.count, chars[p] == "?" || (chars[p] != "*" && chars[p] == text[t]) {
                p += 1
                t += 1
            } else if p < chars.count, chars[p] == "*" {
                star = p
                starText = t
                p += 1
            } else if let s = star {
                // Let the last `*` swallow one more character and retry.
                p = s + 1
                starText += 1
                t = starText
            } else {
                return false
            }
        }
        while p < chars.count, chars[p] == "*" { p += 1 }
        return p == chars.count
    }
}
