import Crypto
import Foundation
import Hummingbird
import PushRelayCore
import PushRelayHTTP
import PushRelayPushChannel
import PushRelaySecurity
import PushRelayServerMetrics
import PushRelayStore

/// The admin token check: `Authorization: Bearer <admin.token>`, compared in constant time, and counted against the
/// address's failed credential checks (`FailedAuthLimiter`): a blocked address gets 429 whatever it sends.
package struct AdminAuth: Sendable {
    /// The admin token's digest only (`SecretMatcher`); the token itself is not kept.
    package let matcher: SecretMatcher
    package let limiter: FailedAuthLimiter
    package let clock: any TimePort

    package init(token: String, limiter: FailedAuthLimiter, clock: any TimePort) {
        self.matcher = SecretMatcher(secret: token)
        self.limiter = limiter
        self.clock = clock
    }

    package func authorize(_ request: Request, peer: String) throws {
        let now = clock.now()
        guard !limiter.isBlocked(peer, now: now) else {
            throw APIError.tooManyFailedAttempts
        }
        let header = request.headers[.authorization] ?? ""
        let prefix = "Bearer "
        guard header.hasPrefix(prefix) else {
            throw APIError(
                .unauthorized,
                "Unauthorized",
                "Send the admin token as 'Authorization: Bearer <admin.token>'.",
                headers: [.wwwAuthenticate: "Bearer"]
            )
        }
        // Digests of a fixed length, compared in constant time: the timing says nothing about the token.
        guard matcher.matches(header.dropFirst(prefix.count)) else {
            limiter.recordFailure(peer, now: now)
            throw APIError(.unauthorized, "Unauthorized", "The admin token is wrong.", headers: [.wwwAuthenticate: "Bearer"])
        }
    }
}

/// `/admin/v1/`: quota queries and per-token limit overrides, behind `Authorization: Bearer <admin.token>`, and the
/// admin console (`/admin/`, a static page that holds no data; `AdminConsoleRoutes`).
/// Not registered at all (so 404) when no admin token is configured.
package struct AdminRoutes<Context: PeerAddressContext> {
    package let admin: any QuotaAdministration
    package let quota: any QuotaLedger
    package let policy: QuotaPolicy
    package let clock: any TimePort
    package let auth: AdminAuth
    package let maxBodyBytes: Int
    /// The delivery log (stats, dead tokens); without it those endpoints are not registered.
    package var deliveries: (any DeliveryLog)? = nil
    /// The Matrix retry queue; without it `/admin/v1/matrix/queue` is not registered.
    package var matrix: (any MatrixStorage)? = nil
    /// This instance's push channel figures.
    package var channelFigures: PushChannelFigures? = nil
    /// `/metrics`' registry (with `metrics.enabled`): the stats' delivery latency.
    package var metrics: PushRelayMetrics? = nil
    /// The setup checks of `GET /admin/v1/setup` (`SetupDoctor.running`); without them it is not registered.
    package var setup: (@Sendable () async -> [SetupCheck])? = nil

    package init(
        admin: any QuotaAdministration,
        quota: any QuotaLedger,
        policy: QuotaPolicy,
        clock: any TimePort,
        auth: AdminAuth,
        maxBodyBytes: Int,
        deliveries: (any DeliveryLog)? = nil,
        matrix: (any MatrixStorage)? = nil,
        channelFigures: PushChannelFigures? = nil,
        metrics: PushRelayMetrics? = nil,
        setup: (@Sendable () async -> [SetupCheck])? = nil
    ) {
        self.admin = admin
        self.quota = quota
        self.policy = policy
        self.clock = clock
        self.auth = auth
        self.maxBodyBytes = maxBodyBytes
        self.deliveries = deliveries
        self.matrix = matrix
        self.channelFigures = channelFigures
        self.metrics = metrics
        self.setup = setup
    }

    package func register(_ routes: RouteTable<Context>) {
        routes.on(
            "/admin/v1/quotas",
            [
                .get: { request, ctx in
                    try authorize(request, ctx)
                    return try await listQuotas(request)
                }
            ]
        )
        routes.on(
            "/admin/v1/quotas/:token",
            [
                .get: { request, ctx in
                    try authorize(request, ctx)
                    return try await showQuota(ctx)
                }
            ]
        )
        routes.on(
            "/admin/v1/limits/:token",
            [
                .put: { request, ctx in
                    try authorize(request, ctx)
                    return try await setLimit(request, ctx)
                },
                .delete: { request, ctx in
                    try authorize(request, ctx)
                    return try await clearLimit(ctx)
                },
            ]
        )
        registerConsoleAPI(routes)
        AdminConsoleRoutes<Context>().register(routes)
    }

    package func authorize(_ request: Request, _ context: Context) throws {
        try auth.authorize(request, peer: context.peerAddress)
    }

    func tokenParameter(_ context: Context) throws -> String {
        guard let t = context.parameters.get("token"), !t.isEmpty else { throw APIError.badRequest("Missing push token in the path.") }
        return t.removingPercentEncoding ?? t
    }

    private func listQuotas(_ request: Request) async throws -> Response {
        let q = request.uri.queryParameters
        var day = UTCDay(clock.now())
        if let d = q["day"] {
            guard let parsed = UTCDay(string: String(d)) else { throw APIError.badRequest("Query parameter 'day' must be a date as YYYY-MM-DD.") }
            day = parsed
        }
        var top: Int?
        if let t = q["top"] {
            guard let n = Int(String(t)), n > 0 else { throw APIError.badRequest("Query parameter 'top' must be a positive whole number.") }
            top = n
        }
        let rows = try await admin.list(day: day, top: top)
        return JSONResponse.make(
            status: .ok,
            body: [
                "day": .string(day.description),
                "quotas": .array(rows.map { usageJSON($0, day: day) }),
            ]
        )
    }

    func showQuota(_ context: Context) async throws -> Response {
        let token = try tokenParameter(context)
        let today = UTCDay(clock.now())
        let history = try await admin.history(pushToken: token)
        let limits = try await quota.rateLimits(pushToken: token, appID: nil, day: today, policy: policy)
        return JSONResponse.make(
            status: .ok,
            body: [
                "target": .string(token),
                "limitOverride": history.limitOverride.map { .int(Int64($0)) } ?? .null,
                "rateLimits": limits.json,
                "days": .array(history.rows.map { usageJSON($0, day: UTCDay(string: $0.day) ?? today) }),
            ]
        )
    }

    private func setLimit(_ request: Request, _ context: Context) async throws -> Response {
        let token = try tokenParameter(context)
        var request = request
        let body = try await request.jsonBody(limit: maxBodyBytes)
        // A whole number, however JSON spells it (`1015` or `1015.0`).
        let limit: Int64? =
            switch body["limit"] {
            case .int(let n)?: n
            case .double(let d)? where d.rounded() == d && abs(d) <= 1e9: Int64(d)
            default: nil
            }
        guard let n = limit, n >= 0, n <= 10_000_000 else {
            throw APIError.badRequest("Send {\"limit\": N} with N a whole number from 0 to 10000000.")
        }
        try await admin.setLimit(pushToken: token, limit: Int(n), now: clock.now())
        return try await showQuota(context)
    }

    private func clearLimit(_ context: Context) async throws -> Response {
        let token = try tokenParameter(context)
        guard try await admin.clearLimit(pushToken: token) else {
            throw APIError.notFound("No limit override is set for this token.")
        }
        return try await showQuota(context)
    }

    func usageJSON(_ row: UsageRow, day: UTCDay) -> JSONValue {
        let maximum = policy.maximum(appID: row.appID, override: row.limitOverride)
        return [
            "day": .string(row.day),
            "target": .string(row.pushToken),
            "appId": row.appID.map(JSONValue.string) ?? .null,
            "limitOverride": row.limitOverride.map { .int(Int64($0)) } ?? .null,
            "noticeSent": .bool(row.noticeSent),
            "rateLimits": RateLimits(counters: row.counters, maximum: maximum, day: day).json,
        ]
    }
}
