import Foundation
import PushRelayCore
import Testing

/// Base64url as WebPush and JWTs use it: the same text and bytes as Foundation's codec, with the alphabets swapped.
@Suite struct Base64URLTests {
    /// What `Base64URL` answered before it had a codec of its own (Foundation), as the reference.
    static func foundationEncode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func foundationDecode(_ s: String) -> [UInt8]? {
        var t = s.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while t.hasSuffix("=") { t.removeLast() }
        switch t.count % 4 {
        case 1: return nil
        case 2: t += "=="
        case 3: t += "="
        default: break
        }
        return Data(base64Encoded: t).map(Array.init)
    }

    @Test func encodingMatchesFoundationForEveryLengthAndByte() {
        var g = SystemRandomNumberGenerator()
        for length in 0..<70 {
            for _ in 0..<20 {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &g) }
                let text = Base64URL.encode(bytes)
                #expect(text == Self.foundationEncode(bytes))
                #expect(Base64URL.decode(text) == bytes)
            }
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
    }

    @Test func decodingMatchesFoundationOnOddInput() {
        let cases = [
            "", "=", "====", "A", "AA", "AAA", "AAAA", "AB", "AB==", "AB=", "ABC", "ABD", "AQ", "AR", "+/8", "-_8", "-/8=", " AQID ",
            "AQ ID", "AQ\nID", "AQ=ID", "A===", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmE=", "Zm9vYmE==", "Zm9vYmF", "é", "AQIDé",
            "\tAQID", "AQID\t", "AQIDBA", "AQIDBB", "____", "----", "++++", "////",
        ]
        for text in cases {
            #expect(Base64URL.decode(text) == Self.foundationDecode(text), "\(text.debugDescription)")
        }
        var g = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/= \t.")
        for _ in 0..<2000 {
            let text = String((0..<Int.random(in: 0..<12, using: &g)).map { _ in alphabet.randomElement(using: &g)! })
            #expect(Base64URL.decode(text) == Self.foundationDecode(text), "\(text.debugDescription)")
        }
    }
}
