import Foundation
import PushRelayCore

/// A WebPush relay request, laid out as the input's first line (the path after `/relay-to/`), header lines up to an
/// empty line, then the body. Parsed as the relay does, then both provider payloads are built from it.
enum WebPushRelayFuzzing {
    static func run(_ bytes: [UInt8]) {
        let (head, body) = split(bytes)
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard let path = lines.first.map(String.init) else { return }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        }
        _ = ExtendedZ85.decode(path)
        _ = Base64URL.decode(path)
        guard case .success(let target) = RelayTarget.parse(path: path) else { return }
        guard case .success(let parsed) = WebPushHeaders.parse(header: { headers[$0.lowercased()] }) else { return }
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        if let apns = try? RelayPayload.apns(body: body, headers: parsed, extra: target.extra, alertText: "New message", now: now) {
            if let payload = apns.apns?.payload { JSONBodyFuzzing.roundTrip(payload) }
        }
        if let fcm = try? RelayPayload.fcm(token: target.token, body: body, headers: parsed, extra: target.extra, alertText: "New message") {
            JSONBodyFuzzing.roundTrip(fcm.fcmMessage)
        }
        // The body travels as extended Z85: it must decode back to itself.
        precondition(ExtendedZ85.decode(ExtendedZ85.encode(body)) == body, "extended Z85 does not round-trip")
    }

    private static func split(_ bytes: [UInt8]) -> (head: ArraySlice<UInt8>, body: [UInt8]) {
        let marker: [UInt8] = [10, 10]
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: marker) }) else { return (bytes[...], []) }
        return (bytes[..<end], Array(bytes[(end + 2)...]))
    }
}
