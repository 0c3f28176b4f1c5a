import Foundation
import Hummingbird
import PushRelayCore
import PushRelayHTTP
import PushRelayStore

/// `GET /health` (liveness) and `GET /ready` (readiness).
///
/// `/health` answers 200 while the process serves HTTP, `{"status":"ok"}`, or `{"status":"degraded","storage":…}`
/// while the database refuses writes: restarting would not cure a full or read-only disk, so it stays 200. Both carry
/// the `version` and the `commit` the binary was built from. `/ready`
/// answers 503 `NotReady` (with `Retry-After`) during such a fault, so a load balancer sends the traffic elsewhere;
/// both recover by themselves when writes go through again (the `StorageMonitor` probes while the fault lasts). From
/// the moment a stop begins (`ServerLifecycle`), `/ready` answers 503 `ShuttingDown` while the instance still serves
/// everything else for the drain period; `/health` stays 200.
struct HealthRoutes<Context: RequestContext> {
    let engine: any StorageEngine
    let lifecycle: ServerLifecycle

    func register(_ routes: RouteTable<Context>) {
        let engine = self.engine
        let lifecycle = self.lifecycle
        routes.on(
            "/health",
            [
                .get: { _, _ in
                    let health = engine.health
                    var body: [String: JSONValue] = [
                        "status": "ok", "version": .string(PushRelayVersion.string), "commit": .string(BuildInfo.commit),
                    ]
                    if !health.isOK {
                        body["status"] = "degraded"
                        body["storage"] = Self.describe(health)
                    }
                    return JSONResponse.make(status: .ok, body: .object(body))
                }
            ]
        )
        routes.on(
            "/ready",
            [
                .get: { _, _ in
                    if lifecycle.isStopping {
                        throw APIError(
                            .serviceUnavailable,
                            "ShuttingDown",
                            "PushRelay is stopping: it still answers requests for a moment (http.drain_period) but should get no new ones; send them to another instance.",
                            headers: [.retryAfter: "5"]
                        )
                    }
                    let health = engine.health
                    guard !health.isOK else { return JSONResponse.make(status: .ok, body: ["status": "ready"]) }
                    throw APIError(
                        .serviceUnavailable,
                        "NotReady",
                        "PushRelay cannot write to its database (\(health.message ?? "storage error")), so it refuses notifications until the fault ends; it retries by itself.",
                        fields: ["storage": Self.describe(health)],
                        headers: [.retryAfter: "5"]
                    )
                }
            ]
        )
    }

    static func describe(_ health: StorageHealth) -> JSONValue {
        var o: [String: JSONValue] = ["state": .string(health.state.rawValue)]
        if let since = health.since { o["since"] = .string(ISO8601UTC.string(since)) }
        if let message = health.message { o["message"] = .string(message) }
        return .object(o)
    }
}
