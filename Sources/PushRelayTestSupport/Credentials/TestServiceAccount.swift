import Foundation
import PushRelayCore
import _CryptoExtras

/// A generated Google service account: an RSA key in the JSON shape the Firebase console downloads.
///
/// Every account made in one process shares one RSA key (generating one is slow, the more so in a debug build, and a
/// test process makes many accounts at once); each has its own key id and email.
public struct TestServiceAccount: Sendable {
    public let projectID: String
    public let clientEmail: String
    public let privateKeyID: String
    /// PKCS#8 PEM, as Google writes it.
    public let privateKeyPEM: String
    /// The public half, which the fake FCM verifies OAuth assertions against.
    public let publicKey: _RSA.Signing.PublicKey

    public init(projectID: String = "pushrelay-test", clientEmail: String? = nil) throws {
        let key = try Self.sharedKey.get()
        self.projectID = projectID
        self.clientEmail = clientEmail ?? "firebase-adminsdk@\(projectID).iam.gserviceaccount.com"
        self.privateKeyID = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        self.privateKeyPEM = key.pkcs8PEMRepresentation
        self.publicKey = key.publicKey
    }

    private static let sharedKey = Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }

    /// The service-account JSON with `token_uri` pointing at `tokenURI` (the fake's `/token`).
    public func json(tokenURI: String) -> String {
        let o: JSONValue = [
            "type": "service_account",
            "project_id": .string(projectID),
            "private_key_id": .string(privateKeyID),
            "private_key": .string(privateKeyPEM),
            "client_email": .string(clientEmail),
            "client_id": "100000000000000000000",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": .string(tokenURI),
        ]
        return o.jsonString(pretty: true)
    }

    /// Writes `service-account.json` into `directory`; returns its path.
    @discardableResult
    public func write(to directory: String, tokenURI: String) throws -> String {
        let path = directory + "/service-account.json"
        try TestFiles.write(json(tokenURI: tokenURI), to: path)
        return path
    }
}
