import NIOCore
import NIOHPACK
import NIOPosix
import PushRelayCore

/// Where a provider request goes: scheme, host and port (the connection is shared by every request to the same one).
struct UpstreamOrigin: Hashable, Sendable {
    var secure: Bool
    var host: String
    var port: Int

    /// The origin of an absolute `http(s)://host[:port]/…` URL, or nil when the URL is not one.
    init?(url: String) {
        let secure: Bool
        let rest: Substring
        if url.hasPrefix("https://") {
            secure = true
            rest = url.dropFirst(8)
        } else if url.hasPrefix("http://") {
            secure = false
            rest = url.dropFirst(7)
        } else {
            return nil
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { return nil }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { return nil }
        let port: Int
        if let portText {
            guard let p = Int(portText), (1...65_535).contains(p) else { return nil }
            port = p
        } else {
            port = secure ? 443 : 80
        }
        self.init(secure: secure, host: String(host).lowercased(), port: port)
    }

    init(secure: Bool, host: String, port: Int) {
        self.secure = secure
        self.host = host
        self.port = port
    }

    /// `host[:port]` as the `:authority` / `Host` header writes it (the port only when it is not the default).
    var authority: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? h : "\(h):\(port)"
    }

    /// Connects a bootstrap from `bootstrap` to `addresses` (with this origin's port), one after another until one
    /// takes the connection, or to the host when there are none.
    static func connect(
        _ bootstrap: @escaping @Sendable () -> ClientBootstrap,
        to origin: UpstreamOrigin,
        at addresses: [SocketAddress]
    ) -> EventLoopFuture<any Channel> {
        guard var address = addresses.first else { return bootstrap().connect(host: origin.host, port: origin.port) }
        address.port = origin.port
        let attempt = bootstrap().connect(to: address)
        guard addresses.count > 1 else { return attempt }
        return attempt.flatMapError { _ in connect(bootstrap, to: origin, at: Array(addresses.dropFirst())) }
    }

    /// The name to send as TLS SNI: the host, unless it is an IP address (SNI carries names only; for an address NIOSSL
    /// checks the certificate against the peer's address).
    var serverName: String? { (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil }

    /// `scheme://authority`, for messages (never a path: APNs paths carry device tokens).
    var description: String { (secure ? "https://" : "http://") + authority }
}

/// One request to a provider: method, where, headers (lower-case names) and the whole body.
struct UpstreamRequest: Sendable {
    var method: String
    var origin: UpstreamOrigin
    /// Path and query, starting with `/`.
    var path: String
    var headers: [(name: String, value: String)]
    var body: ByteBuffer
    /// Where a new connection for this request connects, instead of resolving the origin's host again: the addresses
    /// `OutboundAddressGuard` checked, so that what was checked is what is reached. Empty: resolve the host.
    var connectAddresses: [SocketAddress] = []

    /// - Parameter url: an absolute `http(s)` URL; nil when it is not one.
    init?(method: String = "POST", url: String, headers: [(name: String, value: String)], body: ByteBuffer) {
        guard let origin = UpstreamOrigin(url: url) else { return nil }
        let afterScheme = url.drop { $0 != ":" }.dropFirst(3)
        let path = afterScheme.drop { $0 != "/" && $0 != "?" }
        self.init(
            method: method,
            origin: origin,
            path: path.isEmpty ? "/" : (path.hasPrefix("?") ? "/" + path : String(path)),
            headers: headers,
            body: body
        )
    }

    init(method: String = "POST", origin: UpstreamOrigin, path: String, headers: [(name: String, value: String)], body: ByteBuffer) {
        self.method = method
        self.origin = origin
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// New connections for this request go to `addresses` (the ones `OutboundAddressGuard` checked) instead of
    /// wherever the host resolves to by then.
    mutating func pin(to addresses: [OutboundAddressPolicy.Address]) {
        connectAddresses = addresses.compactMap { try? SocketAddress(ipAddress: $0.description, port: origin.port) }
    }

    /// The absolute URL (for the HTTP/1.1 client).
    var url: String { origin.description + path }

    /// The HTTP/2 header block: pseudo-headers first, then the headers and the body's length.
    var headerBlock: HPACKHeaders {
        var block = HPACKHeaders()
        block.reserveCapacity(headers.count + 5)
        block.add(name: ":method", value: method)
        block.add(name: ":scheme", value: origin.secure ? "https" : "http")
        block.add(name: ":authority", value: origin.authority)
        block.add(name: ":path", value: path)
        for (name, value) in headers { block.add(name: name, value: value) }
        if body.readableBytes > 0 || method == "POST" {
            block.add(name: "content-length", value: String(body.readableBytes))
        }
        return block
    }
}
