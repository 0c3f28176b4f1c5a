import Hummingbird
import PushRelayCore

/// Replaces the request's peer address by the client its forwarding headers name, when the connection comes from a
/// trusted proxy (`http.trusted_proxies`); from anyone else those headers change nothing. Runs before every route, so
/// the failed-credential budgets count the client, not the proxy, and binds `ClientAddress.current` for the
/// dispatcher's per-client waiting lines.
package struct ClientAddressMiddleware<Context: PeerAddressContext>: RouterMiddleware {
    package let proxies: TrustedProxies

    package init(proxies: TrustedProxies) {
        self.proxies = proxies
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.peerAddress = ClientAddress.client(peer: context.peerAddress, headers: request.headers, proxies: proxies)
        return try await ClientAddress.$current.withValue(context.peerAddress) { try await next(request, context) }
    }
}
