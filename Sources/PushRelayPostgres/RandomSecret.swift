import Crypto
import Foundation

/// Random secrets as PushRelay shows them (channel tokens, API keys): base64url without padding.
enum RandomSecret {
    static func base64URL(bytes: Int) -> String {
        let raw = SymmetricKey(size: SymmetricKeySize(bitCount: bytes * 8)).withUnsafeBytes { Array($0) }
        return Data(raw).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
