/// A strict RFC 8259 JSON parser producing `JSONValue`, keeping integers apart from floating-point numbers.
///
/// Written for the request path: one pass over the bytes, no Foundation bridging, errors with a byte offset.
public struct JSONParser {
    public struct Error: Swift.Error, Equatable, CustomStringConvertible, Sendable {
        public var offset: Int
        public var reason: String
        public var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    /// Nesting deeper than this is refused (protects the stack from hostile input).
    public static let maxDepth = 256

    private let bytes: UnsafeBufferPointer<UInt8>
    private var i = 0
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    public static func parse<C: Collection<UInt8>>(_ data: C) throws(Error) -> JSONValue {
        let array = Array(data)
        let result: Result<JSONValue, Error> = array.withUnsafeBufferPointer { buf in
            var p = JSONParser(buf)
            do throws(Error) {
                p.skipWhitespace()
                let v = try p.parseValue()
                p.skipWhitespace()
                guard p.i == buf.count else { throw p.fail("unexpected data after the JSON value") }
                return .success(v)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    public static func parse(_ string: String) throws(Error) -> JSONValue {
        try parse(Array(string.utf8))
    }

    private func fail(_ reason: String) -> Error { Error(offset: i, reason: reason) }

    private mutating func skipWhitespace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(Error) -> JSONValue {
        guard i < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    private mutating func expectLiteral(_ word: StaticString) throws(Error) {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw fail("unexpected end of input") }
        let w = word.utf8Start
        for k in 0..<n where bytes[i + k] != w[k] { throw fail("invalid literal") }
        i += n
    }

    private mutating func enter() throws(Error) {
        depth += 1
        if depth > JSONParser.maxDepth { throw fail("nesting too deep") }
    }

    private mutating func parseObject() throws(Error) -> JSONValue {
        try enter()
        i += 1
        var obj: [String: JSONValue] = [:]
        // Room for a typical object up front: grown from empty, a notification's objects are rehashed two or three
        // times each.
        obj.reserveCapacity(8)
        skipWhitespace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            depth -= 1
            return .object(obj)
        }
        while true {
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            skipWhitespace()
            obj[key] = try parseValue()
            skipWhitespace()
            guard i < bytes.count else { throw fail("unexpected end of input") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "}") {
                i += 1
                break
            }
            throw fail("expected ',' or '}'")
        }
        depth -= 1
        return .object(obj)
    }

    private mutating func parseArray() throws(Error) -> JSONValue {
        try enter()
        i += 1
        var arr: [JSONValue] = []
        skipWhitespace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
            depth -= 1
            return .array(arr)
        }
        while true {
            skipWhitespace()
            arr.append(try parseValue())
            skipWhitespace()
            guard i < bytes.count else { throw fail("unexpected end of input") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "]") {
                i += 1
                break
            }
            throw fail("expected ',' or ']'")
        }
        depth -= 1
        return .array(arr)
    }

    private mutating func parseString() throws(Error) -> String {
        i += 1  // opening quote
        let start = i
        // Fast path: no escapes. `seen` collects every byte's high bit: an all-ASCII string (the common case) is valid
        // UTF-8 as it stands, and `String(decoding:)` builds it without `String(validating:)`, whose generic entry
        // point looks up type metadata on every call.
        var seen: UInt8 = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                let raw = UnsafeBufferPointer(rebasing: bytes[start..<i])
                let s = seen < 0x80 ? String(decoding: raw, as: UTF8.self) : String(validating: raw, as: UTF8.self)
                guard let s else { throw fail("invalid UTF-8 in string") }
                i += 1
                return s
            }
            if b == UInt8(ascii: "\\") || b < 0x20 { break }
            seen |= b
            i += 1
        }
        var out: [UInt8] = Array(bytes[start..<i])
        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case UInt8(ascii: "\""):
                i += 1
                guard let s = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
                return s
            case UInt8(ascii: "\\"):
                i += 1
                guard i < bytes.count else { throw fail("unexpected end of input") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                            throw fail("unpaired surrogate")
                        }
                        i += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid surrogate pair") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("unpaired surrogate")
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw fail("invalid unicode escape") }
                    out.append(contentsOf: Array(String(Character(u)).utf8))
                default: throw fail("invalid escape")
                }
            default:
                guard b >= 0x20 else { throw fail("control character in string") }
                out.append(b)
                i += 1
            }
        }
        throw fail("unterminated string")
    }

    private mutating func parseHex4() throws(Error) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("unexpected end of input") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw fail("invalid hex digit")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    private mutating func parseNumber() throws(Error) -> JSONValue {
        let start = i
        var isInteger = true
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count else { throw fail("invalid number") }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
        } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[i]) {
            while i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) { i += 1 }
        } else {
            throw fail("invalid number")
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            let digits = i
            while i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) { i += 1 }
            guard i > digits else { throw fail("invalid number") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            isInteger = false
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            let digits = i
            while i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) { i += 1 }
            guard i > digits else { throw fail("invalid number") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        if isInteger, let v = Int64(text) { return .int(v) }
        guard let d = Double(text), d.isFinite else { throw fail("number out of range") }
        return .double(d)
    }
}
