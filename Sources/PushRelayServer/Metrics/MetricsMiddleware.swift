import Hummingbird

/// Counts every request of the router once its response (including a JSON error) is known
/// (`PushRelayMetrics.record`).
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: PushRelayMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        metrics.record(
            route: context.endpointPath,
            method: request.method.rawValue,
            status: response.status.code,
            duration: ContinuousClock.now - start
        )
        return response
    }
}
