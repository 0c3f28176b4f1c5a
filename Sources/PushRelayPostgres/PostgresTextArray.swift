import NIOCore
import PostgresNIO

/// A `text[]` parameter whose elements may be NULL (postgres-nio encodes `[String]` only), in PostgreSQL's binary
/// array format. Batched statements pass one array per column (`unnest`), so their text is the same for any batch
/// size and can be prepared once per connection.
struct PostgresTextArray: PostgresNonThrowingEncodable, PostgresDynamicTypeEncodable, Sendable {
    var elements: [String?]

    init(_ elements: [String?]) {
        self.elements = elements
    }

    static var psqlType: PostgresDataType { .textArray }
    static var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        // Dimensions (0 for an empty array), whether any element is NULL, the element type.
        buffer.writeInteger(elements.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(elements.contains(where: { $0 == nil }) ? 1 : 0, as: Int32.self)
        buffer.writeInteger(PostgresDataType.text.rawValue)
        guard !elements.isEmpty else { return }
        // The one dimension's length and lower bound, then each element: its length (-1: NULL) and its bytes.
        buffer.writeInteger(Int32(elements.count))
        buffer.writeInteger(1, as: Int32.self)
        for element in elements {
            guard let element else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            let written = buffer.writeString(element)
            buffer.setInteger(Int32(written), at: lengthIndex)
        }
    }
}
