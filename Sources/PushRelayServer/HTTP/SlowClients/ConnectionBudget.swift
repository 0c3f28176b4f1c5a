import PushRelayCore

/// How many connections each client address holds (`http.max_connections_per_address`), so one client cannot take
/// every connection the server can keep open.
final class ConnectionBudget: Sendable {
    let limitPerAddress: Int
    private let open = Locked<[String: Int]>([:])

    init(limitPerAddress: Int) {
        self.limitPerAddress = limitPerAddress
    }

    /// Counts a new connection from `address`; false (and nothing counted) if the address is at its limit.
    func admit(_ address: String) -> Bool {
        open.withLock { open in
            let n = open[address, default: 0]
            guard n < limitPerAddress else { return false }
            open[address] = n + 1
            return true
        }
    }

    /// A connection `admit` counted has closed.
    func release(_ address: String) {
        open.withLock { open in
            let n = open[address, default: 1] - 1
            open[address] = n > 0 ? n : nil
        }
    }

    func count(_ address: String) -> Int { open.withLock { $0[address, default: 0] } }
}
