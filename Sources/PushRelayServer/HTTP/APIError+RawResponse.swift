import NIOCore
import PushRelayCore

extension APIError {
    /// The error as a complete HTTP/1.1 response with `connection: close`, as bytes: for handlers that answer below
    /// the HTTP codec (before a request was parsed, or instead of one) and then close the connection.
    func rawResponse(allocator: ByteBufferAllocator) -> ByteBuffer {
        let body = JSONWriter.bytes(self.body)
        var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\ncontent-type: application/json\r\ncontent-length: \(body.count)\r\n"
        for field in headers { head += "\(field.name.canonicalName): \(field.value)\r\n" }
        head += "connection: close\r\n\r\n"
        var buffer = allocator.buffer(capacity: head.utf8.count + body.count)
        buffer.writeString(head)
        buffer.writeBytes(body)
        return buffer
    }
}
