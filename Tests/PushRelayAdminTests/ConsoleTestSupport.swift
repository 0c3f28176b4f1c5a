import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import Synchronization

/// A provider for the console's tests: delivers, except that a token containing "uninstalled" is reported dead and one
/// containing "broken" has its payload refused (a failed, counted delivery).
final class ConsoleTrafficProvider: PushProvider {
    let name: String
    private let sent = Atomic<Int>(0)

    init(name: String = "console") { self.name = name }

    func send(_ delivery: Delivery) async throws(DeliveryFailure) -> DeliveryReceipt {
        if delivery.pushToken.contains("uninstalled") {
            throw .invalidToken(reason: "UNREGISTERED", message: "Requested entity was not found.")
        }
        if delivery.pushToken.contains("broken") {
            throw .invalidPayload(reason: "INVALID_ARGUMENT", message: "Invalid JSON payload received.")
        }
        let n = sent.add(1, ordering: .relaxed).newValue
        return DeliveryReceipt(messageID: "\(name):\(n)", sentPayload: delivery.notification.fcmMessage)
    }
}

enum ConsoleTestConfig {
    static let adminToken = "console-admin-token-5f0c2e9b71"
    static let auth = [("Authorization", "Bearer \(adminToken)")]
    static let yaml = "admin:\n  token: \"\(adminToken)\"\nquota:\n  daily_limit: 5\nmetrics:\n  enabled: true\n"

    /// The iOS companion app to the sandbox, everything else to `ConsoleTrafficProvider`.
    static func configure(_ c: inout PushRelayConfig) {
        c.providers["sandbox"] = .init(name: "sandbox", type: "sandbox")
        c.apps = [.init(match: "io.robbie.HomeAssistant*", provider: "sandbox"), .init(match: "*", provider: "console")]
        c.delivery.retryBaseMs = 5
    }
}

extension TestServer {
    /// Every delivery-log row, counted by provider (what `/metrics`' delivery histogram has seen).
    func deliveriesByProvider() async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try await storage.deliveries.recentDeliveries(pushToken: nil, limit: 100_000) { counts[row.provider, default: 0] += 1 }
        return counts
    }
}
