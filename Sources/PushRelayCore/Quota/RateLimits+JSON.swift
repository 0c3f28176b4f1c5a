extension RateLimits {
    /// The `rateLimits` object's fields, keys in the sorted order JSONWriter writes them.
    private var fields: [(key: String, value: JSONValue)] {
        [
            ("attempts", .int(Int64(attempts))), ("errors", .int(Int64(errors))), ("maximum", .int(Int64(maximum))),
            ("remaining", .int(Int64(remaining))), ("resetsAt", .string(resetsAt)), ("successful", .int(Int64(successful))),
            ("total", .int(Int64(total))),
        ]
    }

    /// `json` as JSONWriter writes it, without building and sorting a dictionary: every 201 carries one.
    public func writeJSON(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (i, (key, value)) in fields.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.write(.string(key), into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.write(value, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// The `rateLimits` object every answer about a token's quota carries (Home Assistant's answers, the admin API):
    /// `attempts`, `successful`, `errors`, `total`, `maximum`, `remaining`, `resetsAt`.
    public var json: JSONValue {
        .object(Dictionary(uniqueKeysWithValues: fields))
    }
}
