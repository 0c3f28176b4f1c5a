import Foundation
import PushRelayCore
import PushRelayProviders
import Testing

/// At the edge, when a caller chose the URL: the host is resolved and every address it has checked against the
/// `OutboundAddressPolicy` (whose rules PushRelayCoreTests/WebPushRelay checks).
@Suite struct OutboundAddressGuardTests {
    typealias Policy = OutboundAddressPolicy

    @Test func aNameThatResolvesToLoopbackIsRefused() async {
        let guardian = OutboundAddressGuard(policy: Policy())
        let result = await guardian.check(url: "https://localhost:8443/push/1")
        guard case .failure(.notAllowed(let host, let address, let category)) = result else {
            Issue.record("localhost was not refused: \(result)")
            return
        }
        #expect(host == "localhost")
        #expect(category == .loopback, "\(address)")
        // An IP literal is judged without DNS, in brackets too.
        #expect(await guardian.check(url: "https://127.0.0.1/x").failureCategory == .loopback)
        #expect(await guardian.check(url: "https://[::1]:9/x").failureCategory == .loopback)
        #expect(await guardian.check(url: "https://169.254.169.254/latest/meta-data").failureCategory == .linkLocal)
        #expect(await guardian.check(url: "https://[::ffff:192.168.0.1]/").failureCategory == .privateNetwork)
    }

    @Test func aNameFromTheHostsFileIsResolvedBeforeTheCheck() async throws {
        // Every name /etc/hosts maps to a loopback address (whatever this machine calls itself) is refused too.
        let hosts = (try? String(contentsOfFile: "/etc/hosts", encoding: .utf8)) ?? ""
        let names = hosts.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, fields[0].hasPrefix("127.") || fields[0] == "::1" else { return nil }
            return String(fields[1])
        }
        let guardian = OutboundAddressGuard(policy: Policy())
        for name in names.prefix(4) {
            let result = await guardian.check(host: name)
            guard case .failure(.notAllowed) = result else {
                Issue.record("\(name) from /etc/hosts was not refused: \(result)")
                continue
            }
        }
        let allowed = OutboundAddressGuard(policy: Policy(allowedNetworks: [Policy.Network(cidr: "127.0.0.0/8")!, Policy.Network(cidr: "::1")!]))
        #expect(try await allowed.check(host: "localhost").get().isEmpty == false, "an explicit allowance opens loopback")
    }

    @Test func aNameThatDoesNotResolveIsNotAllowed() async {
        let result = await OutboundAddressGuard(policy: Policy()).check(host: "no-such-host.invalid")
        guard case .failure(.unresolvable) = result else {
            Issue.record("\(result)")
            return
        }
    }
}

extension Result where Success == [OutboundAddressPolicy.Address], Failure == OutboundAddressGuard.Refusal {
    var failureCategory: OutboundAddressPolicy.Category? {
        if case .failure(.notAllowed(_, _, let category)) = self { return category }
        return nil
    }
}
