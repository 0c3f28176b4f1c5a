import Hummingbird
import PushRelayCore

/// Counts every request of the router once its response (including a JSON error) is known
/// (`PushRelayMetrics.record`), timed on the server's clock.
package struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: PushRelayMetrics
    let clock: any TimePort

    package init(metrics: PushRelayMetrics, clock: any TimePort) {
        self.metrics = metrics
        self.clock = clock
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = clock.instant
        let response = try await next(request, context)
        metrics.record(
            route: context.endpointPath,
            method: request.method.rawValue,
            status: response.status.code,
            duration: start.duration(to: clock.instant)
        )
        return response
    }
}
