import NIOCore
import PushRelayHTTP
import Testing

@testable import PushRelayServer

/// How the listener names its socket, and the warning a Unix socket gets: its clients have no address to count.
@Suite struct HTTPListenerTests {
    @Test func aUnixSocketIsWarnedOfAndAnIPSocketIsNot() throws {
        let unix = try SocketAddress(unixDomainSocketPath: "/run/pushrelay.sock")
        let warning = try #require(HTTPListener.unixSocketWarning(unix))
        #expect(warning.contains("count every client as one"))
        #expect(warning.contains("http.trusted_proxies"))
        #expect(HTTPListener.unixSocketWarning(try SocketAddress(ipAddress: "127.0.0.1", port: 8080)) == nil)
        #expect(HTTPListener.unixSocketWarning(try SocketAddress(ipAddress: "::1", port: 8080)) == nil)
        #expect(HTTPListener.unixSocketWarning(nil) == nil)
    }

    @Test func socketsAreNamedByAddressOrPath() throws {
        #expect(HTTPListener.describe(try SocketAddress(ipAddress: "127.0.0.1", port: 8080)) == "127.0.0.1:8080")
        #expect(HTTPListener.describe(try SocketAddress(ipAddress: "::1", port: 8080)) == "[::1]:8080")
        #expect(HTTPListener.describe(try SocketAddress(unixDomainSocketPath: "/run/pushrelay.sock")) == "unix:/run/pushrelay.sock")
    }
}
