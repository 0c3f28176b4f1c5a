import PushRelayCore

/// A text frame from a websocket push-channel client, and the error answer the server would write for it.
enum PushChannelMessageFuzzing {
    static func run(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            _ = try PushChannelWire.parse(text)
        } catch {
            let answer = PushChannelWire.error(id: error.id, .invalidFormat, error.message)
            guard (try? JSONParser.parse(answer)) != nil else { fatalError("the error answer is not JSON: \(answer)") }
        }
    }
}
