import Foundation
import Hummingbird
import PushRelayCore
import PushRelayHTTP
import PushRelayStore

/// The endpoints the admin console reads and writes (all behind `AdminAuth`; documented in docs/admin-console.md):
/// `GET /admin/v1/stats`, `POST /admin/v1/quotas/{token}/reset`, `GET /admin/v1/dead-tokens`,
/// `DELETE /admin/v1/dead-tokens/{token}`, `GET /admin/v1/matrix/queue`, `GET /admin/v1/setup`.
extension AdminRoutes {
    /// At most this many delivery-log rows are read for today's charts (`DeliverySummary.complete` says if it was all).
    static var deliveryScanLimit: Int { 50_000 }

    func registerConsoleAPI(_ routes: RouteTable<Context>) {
        routes.on(
            "/admin/v1/stats",
            [
                .get: { request, ctx in
                    try authorize(request, ctx)
                    return try await stats(request)
                }
            ]
        )
        routes.on(
            "/admin/v1/quotas/:token/reset",
            [
                .post: { request, ctx in
                    try authorize(request, ctx)
                    return try await resetDay(request, ctx)
                }
            ]
        )
        if let deliveries {
            routes.on(
                "/admin/v1/dead-tokens",
                [
                    .get: { request, ctx in
                        try authorize(request, ctx)
                        return try await listDeadTokens(request, deliveries)
                    }
                ]
            )
            routes.on(
                "/admin/v1/dead-tokens/:token",
                [
                    .delete: { request, ctx in
                        try authorize(request, ctx)
                        let token = try tokenParameter(ctx)
                        guard try await deliveries.forgetDead(token) else { throw APIError.notFound("This token is not remembered as dead.") }
                        return JSONResponse.make(status: .ok, body: ["target": .string(token), "forgotten": true])
                    }
                ]
            )
        }
        if let setup {
            routes.on(
                "/admin/v1/setup",
                [
                    .get: { request, ctx in
                        try authorize(request, ctx)
                        return JSONResponse.make(status: .ok, body: SetupCheck.report(await setup()))
                    }
                ]
            )
        }
        if let matrix {
            routes.on(
                "/admin/v1/matrix/queue",
                [
                    .get: { request, ctx in
                        try authorize(request, ctx)
                        return try await matrixQueue(matrix)
                    }
                ]
            )
        }
    }

    private func positiveInt(_ request: Request, _ name: String, default value: Int, max maximum: Int) throws -> Int {
        guard let text = request.uri.queryParameters[Substring(name)] else { return value }
        guard let n = Int(String(text)), n >= 1, n <= maximum else {
            throw APIError.badRequest("Query parameter '\(name)' must be a whole number from 1 to \(maximum).")
        }
        return n
    }

    private func stats(_ request: Request) async throws -> Response {
        let dayCount = try positiveInt(request, "days", default: 30, max: 366)
        let now = clock.now()
        let today = UTCDay(now)
        var days: [AdminStats.Day] = []
        for offset in stride(from: Int64(dayCount - 1), through: 0, by: -1) {
            let day = today.adding(days: -offset)
            days.append(AdminStats.day(day, rows: try await admin.list(day: day, top: nil)))
        }
        var stats = AdminStats(
            today: today,
            days: days,
            hours: (0..<24).map { AdminStats.Hour(hour: $0, accepted: 0, failed: 0) },
            deliveries: [],
            kinds: [:],
            deliveryLogComplete: deliveries != nil
        )
        if let deliveries {
            let summary = try await deliveries.deliverySummary(day: today, scanLimit: Self.deliveryScanLimit)
            let counted = AdminStats.deliveries(summary)
            stats.hours = counted.hours
            stats.deliveries = counted.byProvider
            stats.kinds = counted.kinds
            stats.deliveryLogComplete = summary.complete
        }
        if let channelFigures {
            stats.channels = (channelFigures.connections, channelFigures.subscriptions, channelFigures.unconfirmed)
        }
        if let matrix {
            let queued = try await matrix.queued()
            stats.matrixQueued = queued.count
            stats.matrixDue = queued.filter { $0.nextAttemptAt <= now }.count
        }
        var body = stats.json
        // Since the process started, from /metrics' histogram; null with metrics off.
        body["latency"] =
            metrics.map { m in
                .array(
                    DeliveryLatency.parse(String(decoding: m.render(), as: UTF8.self)).map { l in
                        [
                            "provider": .string(l.provider), "count": .int(Int64(l.count)),
                            "p50": l.p50.map(JSONValue.double) ?? .null, "p90": l.p90.map(JSONValue.double) ?? .null,
                            "p99": l.p99.map(JSONValue.double) ?? .null,
                        ]
                    }
                )
            } ?? .null
        body["generatedAt"] = .string(ISO8601UTC.string(now))
        return JSONResponse.make(status: .ok, body: body)
    }

    private func resetDay(_ request: Request, _ context: Context) async throws -> Response {
        let token = try tokenParameter(context)
        var day = UTCDay(clock.now())
        if let d = request.uri.queryParameters["day"] {
            guard let parsed = UTCDay(string: String(d)) else { throw APIError.badRequest("Query parameter 'day' must be a date as YYYY-MM-DD.") }
            day = parsed
        }
        guard try await admin.reset(pushToken: token, day: day) else {
            throw APIError.notFound("This token has no usage on \(day).")
        }
        return try await showQuota(context)
    }

    private func listDeadTokens(_ request: Request, _ deliveries: any DeliveryLog) async throws -> Response {
        let limit = try positiveInt(request, "limit", default: 500, max: 10_000)
        let listed = try await deliveries.deadTokens(now: clock.now(), limit: limit)
        return JSONResponse.make(
            status: .ok,
            body: [
                "count": .int(Int64(listed.count)),
                "deadTokens": .array(
                    listed.map {
                        [
                            "target": .string($0.pushToken),
                            "provider": .string($0.dead.provider),
                            "reason": .string($0.dead.reason),
                            "message": $0.dead.message.map(JSONValue.string) ?? .null,
                            "markedAt": .string($0.dead.markedAt),
                            "expiresAt": .string($0.dead.expiresAt),
                        ]
                    }
                ),
            ]
        )
    }

    private func matrixQueue(_ matrix: any MatrixStorage) async throws -> Response {
        let now = clock.now()
        let queued = try await matrix.queued()
        return JSONResponse.make(
            status: .ok,
            body: [
                "queued": .int(Int64(queued.count)),
                "due": .int(Int64(queued.filter { $0.nextAttemptAt <= now }.count)),
                // The first 100 by id; pushkeys are secrets, shown shortened.
                "items": .array(
                    queued.prefix(100).map {
                        [
                            "id": .int($0.id),
                            "appId": .string($0.appID),
                            "pushkey": .string(TokenDisplay.short($0.pushkey)),
                            "eventId": $0.eventID.map(JSONValue.string) ?? .null,
                            "attempts": .int(Int64($0.attempts)),
                            "nextAttemptAt": .string(ISO8601UTC.string($0.nextAttemptAt)),
                            "createdAt": .string(ISO8601UTC.string($0.createdAt)),
                            "lastError": $0.lastError.map(JSONValue.string) ?? .null,
                        ]
                    }
                ),
            ]
        )
    }
}
