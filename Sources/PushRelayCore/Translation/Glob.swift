/// A minimal shell-style glob: `*` matches any run of characters (including none), `?` exactly one character,
/// everything else itself. Case-sensitive; no character classes or escapes.
/// Matching is per Unicode scalar (app ids are ASCII in practice). The common shapes (`*`, a literal, `prefix.*`) are
/// matched without building arrays: this runs for every notification.
public struct Glob: Sendable, Hashable {
    public let pattern: String
    private let chars: [Unicode.Scalar]
    private let shape: Shape

    private enum Shape: Sendable, Hashable {
        case anything
        case literal
        case prefix(String)
        case general
    }

    public init(_ pattern: String) {
        self.pattern = pattern
        self.chars = Array(pattern.unicodeScalars)
        let wild = chars.filter { $0 == "*" || $0 == "?" }
        if pattern == "*" {
            shape = .anything
        } else if wild.isEmpty {
            shape = .literal
        } else if wild.count == 1, chars.last == "*" {
            shape = .prefix(String(pattern.unicodeScalars.dropLast()))
        } else {
            shape = .general
        }
    }

    public func matches(_ s: String) -> Bool {
        switch shape {
        case .anything: return true
        case .literal: return s.unicodeScalars.elementsEqual(pattern.unicodeScalars)
        case .prefix(let prefix): return s.unicodeScalars.starts(with: prefix.unicodeScalars)
        case .general: return matchesGeneral(s)
        }
    }

    private func matchesGeneral(_ s: String) -> Bool {
        let text = Array(s.unicodeScalars)
        var p = 0
        var t = 0
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
