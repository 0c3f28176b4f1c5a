/// String shortening on whole characters (never inside a UTF-8 sequence or a grapheme cluster).
public enum MatrixText {
    /// The ellipsis appended to shortened fields (3 bytes in UTF-8).
    public static let ellipsis = "…"

    /// `s` if it has at most `maxBytes` UTF-8 bytes; otherwise its longest whole-character prefix that leaves room for
    /// `…` within `maxBytes`, followed by `…`.
    public static func truncatedUTF8(_ s: String, maxBytes: Int) -> String {
        guard s.utf8.count > maxBytes else { return s }
        let budget = maxBytes - ellipsis.utf8.count
        guard budget > 0 else { return String(ellipsis.prefix(maxBytes > 0 ? 1 : 0)) }
        var used = 0
        var end = s.startIndex
        for c in s {
            let n = c.utf8.count
            if used + n > budget { break }
            used += n
            end = s.index(after: end)
        }
        return String(s[..<end]) + ellipsis
    }

    /// The first `maxCharacters` characters of `s`.
    public static func prefix(_ s: String, maxCharacters: Int) -> String {
        s.count > maxCharacters ? String(s.prefix(maxCharacters)) : s
    }

    /// Bytes a string's characters cost inside a JSON string literal as `JSONWriter` writes it.
    static func jsonCost(_ c: Character) -> Int {
        var n = 0
        for b in c.utf8 {
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09: n += 2
            case 0..<0x20: n += 6
            default: n += 1
            }
        }
        return n
    }
}

/// Shortens "choppable" strings of a JSON payload until it fits a byte limit: repeatedly removes the last whole
/// character of the choppable string that is currently longest (in encoded bytes), as Sygnal's APNs truncation does,
/// but computed from per-character costs instead of re-encoding the payload after every character.
public enum PayloadTrimmer {
    /// A path to a string inside a JSON value: object keys and array indices.
    public enum Step: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    /// Returns the trimmed payload, or nil when it cannot be brought within `limit` bytes by shortening `paths`.
    /// Paths that do not lead to a string are ignored.
    public static func fit(_ payload: JSONValue, limit: Int, choppable paths: [[Step]]) -> JSONValue? {
        var size = JSONWriter.bytes(payload).count
        if size <= limit { return payload }
        // Per choppable string: its characters and their encoded costs; the kept count shrinks from the end.
        struct Chop {
            var path: [Step]
            var chars: [Character]
            var costs: [Int]
            var kept: Int
            var bytes: Int
        }
        var chops: [Chop] = []
        for p in paths {
            guard case .string(let s)? = value(at: p, in: payload) else { continue }
            let chars = Array(s)
            let costs = chars.map(MatrixText.jsonCost)
            chops.append(Chop(path: p, chars: chars, costs: costs, kept: chars.count, bytes: costs.reduce(0, +)))
        }
        while size > limit {
            // The longest remaining choppable; the first listed wins ties.
            var best = -1
            for (i, c) in chops.enumerated() where c.kept > 0 && (best < 0 || c.bytes > chops[best].bytes) { best = i }
            guard best >= 0 else { return nil }
            chops[best].kept -= 1
            let cost = chops[best].costs[chops[best].kept]
            chops[best].bytes -= cost
            size -= cost
        }
        var out = payload
        for c in chops where c.kept < c.chars.count {
            set(.string(String(c.chars[0..<c.kept])), at: c.path, in: &out)
        }
        return out
    }

    static func value(at path: [Step], in v: JSONValue) -> JSONValue? {
        var node = v
        for step in path {
            switch (step, node) {
            case (.key(let k), .object(let o)):
                guard let next = o[k] else { return nil }
                node = next
            case (.index(let i), .array(let a)):
                guard a.indices.contains(i) else { return nil }
                node = a[i]
            default:
                return nil
            }
        }
        return node
    }

    static func set(_ new: JSONValue, at path: [Step], in v: inout JSONValue) {
        guard let first = path.first else {
            v = new
            return
        }
        let rest = Array(path.dropFirst())
        switch (first, v) {
        case (.key(let k), .object(var o)):
            guard var child = o[k] else { return }
            set(new, at: rest, in: &child)
            o[k] = child
            v = .object(o)
        case (.index(let i), .array(var a)) where a.indices.contains(i):
            set(new, at: rest, in: &a[i])
            v = .array(a)
        default:
            return
        }
    }
}
