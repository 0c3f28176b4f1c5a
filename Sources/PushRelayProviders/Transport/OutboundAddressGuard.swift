import Foundation
import NIOCore
import NIOPosix
import PushRelayCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The edge of `OutboundAddressPolicy`: resolves the host of a URL a caller chose (a WebPush endpoint, an
/// `Unsubscribe-URL`) and checks every address it resolves to, right before the request that will connect there.
///
/// **Time of check and time of use.** The check runs immediately before every request, and the request's new
/// connections go to the very addresses that were checked (`UpstreamRequest.pin`): the host is not resolved a second
/// time, so a name that resolves elsewhere at the second look (DNS rebinding) reaches nothing it was not checked for. A
/// host is refused if *any* of its addresses is not allowed. A pooled connection to the same origin, opened for an
/// earlier request, was checked when it was opened. Redirects are never followed, so an answer cannot send the request
/// on to another address.
public struct OutboundAddressGuard: Sendable {
    /// Why a host may not be contacted.
    public enum Refusal: Error, Sendable, Equatable {
        /// It is, or resolves to, an address the policy refuses.
        case notAllowed(host: String, address: OutboundAddressPolicy.Address, category: OutboundAddressPolicy.Category)
        /// It does not resolve (the request could not have been made either).
        case unresolvable(host: String, problem: String)

        public var message: String {
            switch self {
            case .notAllowed(let host, let address, let category):
                let what = host == address.description ? "\(host) is" : "'\(host)' resolves to \(address),"
                return "\(what) a \(category.rawValue) address; PushRelay does not contact those unless allowed_private_networks lists them"
            case .unresolvable(let host, let problem):
                return "cannot resolve '\(host)': \(problem)"
            }
        }
    }

    public let policy: OutboundAddressPolicy

    public init(policy: OutboundAddressPolicy) {
        self.policy = policy
    }

    /// Checks the host of `url` (an IP literal as it is, a name after resolving it). Returns the checked addresses.
    public func check(url: String) async -> Result<[OutboundAddressPolicy.Address], Refusal> {
        guard let host = URLComponents(string: url)?.host, !host.isEmpty else {
            return .failure(.unresolvable(host: url, problem: "the URL has no host"))
        }
        return await check(host: host)
    }

    /// Checks `host`: an IP literal as it is, a name after resolving it (every address it resolves to must pass).
    public func check(host: String) async -> Result<[OutboundAddressPolicy.Address], Refusal> {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let addresses: [OutboundAddressPolicy.Address]
        if let literal = OutboundAddressPolicy.Address(bare) {
            addresses = [literal]
        } else {
            do {
                addresses = try await Self.resolve(bare)
            } catch {
                return .failure(.unresolvable(host: bare, problem: "\(error)"))
            }
        }
        switch policy.check(addresses) {
        case .allowed: return .success(addresses)
        case .refused(let address, let category): return .failure(.notAllowed(host: bare, address: address, category: category))
        }
    }

    struct ResolutionError: Error, CustomStringConvertible {
        var description: String
    }

    /// Every address `getaddrinfo` gives for `host` (blocking, so run on NIO's thread pool, off the event loops).
    static func resolve(_ host: String) async throws -> [OutboundAddressPolicy.Address] {
        try await NIOThreadPool.singleton.runIfActive {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            #if canImport(Darwin)
            hints.ai_socktype = SOCK_STREAM
            #else
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            #endif
            var list: UnsafeMutablePointer<addrinfo>?
            let rc = getaddrinfo(host, nil, &hints, &list)
            guard rc == 0, let first = list else {
                throw ResolutionError(description: String(cString: gai_strerror(rc)))
            }
            defer { freeaddrinfo(first) }
            var out: [OutboundAddressPolicy.Address] = []
            var next: UnsafeMutablePointer<addrinfo>? = first
            while let info = next {
                if let sa = info.pointee.ai_addr {
                    switch Int32(info.pointee.ai_family) {
                    case AF_INET:
                        let bytes = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { p in
                            withUnsafeBytes(of: p.pointee.sin_addr) { Array($0) }
                        }
                        if let a = OutboundAddressPolicy.Address(bytes: bytes), !out.contains(a) { out.append(a) }
                    case AF_INET6:
                        let bytes = sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in
                            withUnsafeBytes(of: p.pointee.sin6_addr) { Array($0) }
                        }
                        if let a = OutboundAddressPolicy.Address(bytes: bytes), !out.contains(a) { out.append(a) }
                    default:
                        break
                    }
                }
                next = info.pointee.ai_next
            }
            guard !out.isEmpty else { throw ResolutionError(description: "no IPv4 or IPv6 address") }
            return out
        }
    }
}
