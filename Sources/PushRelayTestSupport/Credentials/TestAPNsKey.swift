import Crypto
import Foundation

/// A generated APNs auth key: what Apple's `AuthKey_<keyID>.p8` download holds, plus the IDs that go with it.
public struct TestAPNsKey: Sendable {
    /// The 10-character Key ID (the JWT `kid`).
    public let keyID: String
    /// The 10-character Team ID (the JWT `iss`).
    public let teamID: String
    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), as in a `.p8` file.
    public let privateKeyPEM: String
    /// The public half, which the fake APNs verifies provider tokens against.
    public let publicKey: P256.Signing.PublicKey

    public init(keyID: String = "KEY1234567", teamID: String = "TEAM123456") {
        let key = P256.Signing.PrivateKey()
        self.keyID = keyID
        self.teamID = teamID
        self.privateKeyPEM = key.pemRepresentation
        self.publicKey = key.publicKey
    }

    /// Writes `AuthKey_<keyID>.p8` into `directory`; returns its path.
    @discardableResult
    public func write(to directory: String) throws -> String {
        let path = directory + "/AuthKey_\(keyID).p8"
        try TestFiles.write(privateKeyPEM, to: path)
        return path
    }
}

/// Small file helpers for generated credentials (private files are written 0600).
public enum TestFiles {
    public static func write(_ text: String, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    /// A new empty directory under the system temporary directory.
    public static func temporaryDirectory(prefix: String = "pushrelay-test") throws -> String {
        let path = NSTemporaryDirectory() + "/\(prefix)-\(UUID().uuidString.lowercased())"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
