import PushRelayCore

/// The JSON parser every API body goes through: whatever it accepts, its writer's output parses back to the same value.
enum JSONBodyFuzzing {
    static func run(_ bytes: [UInt8]) {
        guard let value = try? JSONParser.parse(bytes) else { return }
        roundTrip(value)
    }

    /// Writes `value` and checks that it parses back equal; used by every target on the JSON it produces.
    static func roundTrip(_ value: JSONValue) {
        let written = JSONWriter.bytes(value)
        guard let again = try? JSONParser.parse(written) else {
            fatalError("JSONWriter wrote what JSONParser refuses: \(String(decoding: written.prefix(200), as: UTF8.self))")
        }
        precondition(again.sameJSON(as: value), "JSON round trip changed the value")
    }
}

extension JSONValue {
    /// Equality as JSON sees it: a number is its value, whether held as an integer or a double (the writer prints
    /// `1.0` as `1`, which parses back as an integer), and NaN, which JSON cannot carry, matches whatever it became.
    fileprivate func sameJSON(as other: JSONValue) -> Bool {
        switch (self, other) {
        case (.array(let a), .array(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.sameJSON(as: $1) }
        case (.object(let a), .object(let b)): a.count == b.count && a.allSatisfy { k, v in b[k].map { v.sameJSON(as: $0) } ?? false }
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): Double(a) == b
        case (.double(let a), .double(let b)): a == b || a.isNaN || b.isNaN
        default: self == other
        }
    }
}
