import Hummingbird
import NIOCore
import PushRelayServerMetrics

/// `GET /metrics`: the recorded metrics and the gauges, read at each scrape, in Prometheus's text format.
package struct MetricsRoute<Context: PeerAddressContext> {
    /// Lets a scrape through or throws the `APIError` it is answered with; given the request and the client's address.
    package typealias Authorize = @Sendable (_ request: Request, _ peer: String) throws -> Void

    package let metrics: PushRelayMetrics
    /// The gauges read at each scrape: the storage engine's, the push channel's.
    package let gauges: [PushRelayMetrics.Probe]
    /// The check a scrape passes first (the admin token, when one is configured); nil: none.
    package let authorize: Authorize?

    package init(metrics: PushRelayMetrics, gauges: [PushRelayMetrics.Probe], authorize: Authorize?) {
        self.metrics = metrics
        self.gauges = gauges
        self.authorize = authorize
    }

    package func register(_ routes: RouteTable<Context>) {
        routes.on(
            "/metrics",
            [
                .get: { request, context in
                    try authorize?(request, context.peerAddress)
                    var headers = HTTPFields()
                    headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
                    return Response(
                        status: .ok,
                        headers: headers,
                        body: .init(byteBuffer: ByteBuffer(bytes: metrics.render(gauges: gauges)))
                    )
                }
            ]
        )
    }
}
