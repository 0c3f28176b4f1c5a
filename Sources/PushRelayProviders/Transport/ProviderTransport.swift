import NIOCore
import NIOSSL

/// The connection settings shared by the provider clients: TLS trust, optional client identity, pool size and
/// timeouts. Each provider instance builds its own `ProviderHTTPClient` from these, so a slow upstream only ever fills
/// its own pool.
struct ProviderTransport: Sendable {
    /// Extra CA certificates (PEM) trusted in addition to the system roots: the fake servers' CA in tests.
    var extraTrustRoots: [NIOSSLCertificate] = []
    /// TLS client certificate chain and key (APNs certificate authentication).
    var clientIdentity: (chain: [NIOSSLCertificate], key: NIOSSLPrivateKey)?
    /// HTTP/1.1 connections per host (HTTP/2 multiplexes requests on one long-lived connection per host).
    var maxConnections: Int = 8
    /// Upper bound for one upstream exchange, connect included.
    var requestTimeout: TimeAmount = .seconds(10)
    /// Idle connections are kept this long: APNs treats connect/disconnect churn as abuse.
    var idleTimeout: TimeAmount = .minutes(10)
    /// Where each new connection looks up the host's addresses (the system's resolver unless an embedder sets one).
    var resolver: ProviderResolver = .system

    /// Loads `ca_file`.
    static func loadTrustRoots(path: String, key: String) throws(ProviderConfigError) -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw ProviderConfigError(key: key, problem: "cannot load CA certificates from '\(path)': \(error)")
        }
        guard !certificates.isEmpty else {
            throw ProviderConfigError(key: key, problem: "'\(path)' holds no PEM certificate")
        }
        return certificates
    }

    /// Loads a PEM certificate chain and its PEM private key (`cert_file` / `cert_key_file`).
    static func loadIdentity(certPath: String, keyPath: String) throws(ProviderConfigError) -> (chain: [NIOSSLCertificate], key: NIOSSLPrivateKey) {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certPath)
        } catch {
            throw ProviderConfigError(key: "cert_file", problem: "cannot load a PEM certificate from '\(certPath)': \(error)")
        }
        guard !chain.isEmpty else { throw ProviderConfigError(key: "cert_file", problem: "'\(certPath)' holds no PEM certificate") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            // The error text never includes key material.
            throw ProviderConfigError(
                key: "cert_key_file",
                problem: "cannot load a PEM private key from '\(keyPath)' (encrypted keys are not supported)"
            )
        }
        return (chain, key)
    }

    /// TLS for connections to providers: the system roots plus `ca_file`, the client identity when there is one.
    func tlsConfiguration(alpn: [String]) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if !extraTrustRoots.isEmpty {
            tls.additionalTrustRoots = [.certificates(extraTrustRoots)]
        }
        if let identity = clientIdentity {
            tls.certificateChain = identity.chain.map { .certificate($0) }
            tls.privateKey = .privateKey(identity.key)
        }
        tls.applicationProtocols = alpn
        return tls
    }
}
