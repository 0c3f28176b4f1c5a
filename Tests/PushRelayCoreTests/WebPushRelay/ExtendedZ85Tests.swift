import Foundation
import PushRelayCore
import Testing

@Suite struct ExtendedZ85Tests {
    @Test(arguments: [
        ("864FD26FB559F75B", "HelloWorld"), ("00", "00"), ("01", "01"), ("ff", "30"), ("0102", "033"), ("ffff", "960"),
        ("010203", "09c6"), ("ffffff", "rr90"), ("0102030405", "0rJua05"), ("deadbeefcafe", "?MsJX7gv"),
    ])
    func referenceVectors(input: String, encoded: String) {
        #expect(ExtendedZ85.encode(hex(input)) == encoded)
        #expect(ExtendedZ85.decode(encoded) == hex(input))
    }

    @Test func roundTripsEveryLengthUpTo64() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...64 {
            for pattern in 0..<4 {
                let bytes: [UInt8] = (0..<length).map { i in
                    switch pattern {
                    case 0: return 0x00
                    case 1: return 0xFF
                    case 2: return UInt8(truncatingIfNeeded: i &* 37 &+ 11)
                    default: return UInt8.random(in: 0...255, using: &generator)
                    }
                }
                let text = ExtendedZ85.encode(bytes)
                #expect(text.utf8.count == ExtendedZ85.encodedLength(byteCount: length))
                #expect(text.utf8.count % 5 != 1, "a single leftover digit is never produced")
                #expect(text.utf8.allSatisfy { ExtendedZ85.alphabet.contains($0) })
                #expect(ExtendedZ85.decode(text) == bytes, "length \(length) pattern \(pattern)")
            }
        }
    }

    @Test func decoderSkipsCharactersOutsideTheAlphabet() {
        #expect(ExtendedZ85.decode("Hello World\n") == hex("864FD26FB559F75B"))
        #expect(ExtendedZ85.decode("") == [])
        #expect(ExtendedZ85.decode("0") == [], "one leftover digit carries no byte")
    }

    @Test func alphabetIsTheZeroMQSet() {
        #expect(ExtendedZ85.alphabet.count == 85)
        #expect(Set(ExtendedZ85.alphabet).count == 85)
    }
}
