import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A throwaway certificate authority generated in-process: issues the fakes' server certificates (and client
/// certificates for APNs certificate auth). Clients trust it through `ca_file` (`certificatePEM`).
public struct TestCertificateAuthority: Sendable {
    /// The CA certificate, PEM. Write it to a file and point a provider's `ca_file` at it.
    public let certificatePEM: String
    let certificate: Certificate
    let key: P256.Signing.PrivateKey

    /// A certificate with its private key, both PEM.
    public struct Issued: Sendable {
        public let certificatePEM: String
        public let privateKeyPEM: String

        /// The pair as NIOSSL wants it.
        func nioIdentity() throws -> (chain: [NIOSSLCertificate], key: NIOSSLPrivateKey) {
            let chain = try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8))
            let key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
            return (chain, key)
        }
    }

    public init(commonName: String = "PushRelay Test CA") throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(commonName) }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(10 * 365 * 86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(key)
        )
        self.key = key
        self.certificate = certificate
        self.certificatePEM = try certificate.serializeAsPEM().pemString
    }

    /// A server certificate for `localhost`, `127.0.0.1` and `::1` (plus `extraDNSNames`).
    public func issueServerCertificate(extraDNSNames: [String] = []) throws -> Issued {
        var names: [GeneralName] = [.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))]
        names.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 15) + [1]))))
        names += extraDNSNames.map { .dnsName($0) }
        return try issue(
            commonName: "localhost",
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            }
        )
    }

    /// A TLS client certificate (APNs certificate authentication).
    public func issueClientCertificate(commonName: String = "Apple Push Services: PushRelay Test") throws -> Issued {
        try issue(
            commonName: commonName,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.clientAuth])
            }
        )
    }

    private func issue(commonName: String, extensions: Certificate.Extensions) throws -> Issued {
        let leafKey = P256.Signing.PrivateKey()
        let now = Date()
        let leaf = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(leafKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(365 * 86_400),
            issuer: certificate.subject,
            subject: try DistinguishedName { CommonName(commonName) },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: .init(key)
        )
        return Issued(certificatePEM: try leaf.serializeAsPEM().pemString, privateKeyPEM: leafKey.pemRepresentation)
    }

    /// The CA as a NIOSSL trust root.
    func nioCertificate() throws -> NIOSSLCertificate {
        try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem)
    }
}
