import NIOCore
import PushRelayCore
import PushRelayEventLoopClock

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many connections each client address holds (`http.max_connections_per_address`), so one client cannot take
/// every connection the server can keep open.
///
/// A connection past the budget is refused at accept, before anything is added to its pipeline: nothing is read from
/// it and nothing is written to it. It is held for `refusalDelay`, unregistered and unread, and then reset, so a
/// client that reconnects the moment it is refused comes back once per delay rather than as fast as the server can
/// accept. An address may have as many refused connections waiting as its budget; past that, a connection is reset
/// at once.
///
/// Addresses count by `AddressKey.key(for:)`: an IPv6 client's whole /64 shares one budget.
package final class ConnectionBudget: Sendable {
    /// What `admit` decided for a new connection.
    package enum Admission: Equatable {
        /// Within the budget: served, and counted until `release`.
        case admitted
        /// Past the budget: to be reset after `refusalDelay`, and counted as waiting until `releaseRefused`.
        case refusedAfterDelay
        /// Past the budget with as many refused connections waiting as the budget: reset at once, not counted.
        case refused
    }

    private struct Counts {
        var open = 0
        var refused = 0
    }

    package let limitPerAddress: Int
    package let refusalDelay: Duration
    /// Where the refusal delay runs.
    package let clock: any TimePort
    private let counts = Locked<[String: Counts]>([:])

    package init(limitPerAddress: Int, refusalDelay: Duration = .seconds(1), clock: any TimePort) {
        self.limitPerAddress = limitPerAddress
        self.refusalDelay = refusalDelay
        self.clock = clock
    }

    /// Counts a new connection from `address` (its /64 for IPv6).
    package func admit(_ address: String) -> Admission {
        let key = AddressKey.key(for: address)
        return counts.withLock { counts in
            var c = counts[key, default: Counts()]
            let admission: Admission
            if c.open < limitPerAddress {
                c.open += 1
                admission = .admitted
            } else if c.refused < limitPerAddress {
                c.refused += 1
                admission = .refusedAfterDelay
            } else {
                admission = .refused
            }
            counts[key] = c
            return admission
        }
    }

    /// A connection `admit` admitted has closed.
    package func release(_ address: String) {
        update(address) { $0.open -= 1 }
    }

    /// A connection `admit` refused after a delay has been reset.
    package func releaseRefused(_ address: String) {
        update(address) { $0.refused -= 1 }
    }

    /// Open connections from `address` (its /64 for IPv6).
    package func count(_ address: String) -> Int { counts.withLock { $0[AddressKey.key(for: address)]?.open ?? 0 } }

    /// Refused connections from `address` (its /64 for IPv6) waiting for their reset.
    package func refusedCount(_ address: String) -> Int { counts.withLock { $0[AddressKey.key(for: address)]?.refused ?? 0 } }

    private func update(_ address: String, _ change: (inout Counts) -> Void) {
        let key = AddressKey.key(for: address)
        counts.withLock { counts in
            guard var c = counts[key] else { return }
            change(&c)
            counts[key] = c.open > 0 || c.refused > 0 ? c : nil
        }
    }

    /// Decides on a just-accepted connection, before anything is added to its pipeline: true if it may be served, and
    /// then it counts against its client address until it closes. False if it is refused; the budget then resets it,
    /// at once or after `refusalDelay`, and nothing else may be done with it. Connections from a trusted proxy carry
    /// many clients and are not counted.
    package func accept(_ channel: any Channel, trustedProxies: TrustedProxies) -> Bool {
        guard let address = channel.remoteAddress?.ipAddress, !trustedProxies.trusts(address) else { return true }
        switch admit(address) {
        case .admitted:
            channel.closeFuture.whenComplete { _ in self.release(address) }
            return true
        case .refusedAfterDelay:
            channel.closeFuture.whenComplete { _ in self.releaseRefused(address) }
            clock.schedule(after: refusalDelay, on: channel.eventLoop) { Self.reset(channel) }
            return false
        case .refused:
            Self.reset(channel)
            return false
        }
    }

    /// Closes `channel` with a reset (SO_LINGER 0) rather than a FIN: the server keeps no TIME_WAIT state for a
    /// connection it refused, and the client learns that it was not served.
    package static func reset(_ channel: any Channel) {
        if let socket = channel as? any SocketOptionProvider {
            socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
        } else {
            channel.close(promise: nil)
        }
    }
}
