import NIOCore
import PushRelayCore

/// A single request to a URL someone else chose (the WebPush relay's `Unsubscribe-URL`), on a client of its own that
/// closes afterwards.
///
/// The host is checked by `addressGuard` first, and the connection goes to the very addresses that were checked (the
/// host is not resolved a second time), so a name that resolves to a private address at the second look reaches
/// nothing. No redirect is followed.
public enum OneOffRequest {
    /// What became of the request.
    public enum Outcome: Sendable, Equatable {
        /// The server answered with this status.
        case answered(status: Int)
        /// The address guard refused the host: nothing was sent.
        case refused(String)
        /// No answer: the URL was not `http(s)`, the host could not be reached, or no answer came in time.
        case failed(String)
    }

    /// `timeout` runs on `clock`.
    public static func send(
        method: String,
        url: String,
        addressGuard: OutboundAddressGuard,
        timeout: TimeAmount,
        clock: any TimePort
    ) async -> Outcome {
        guard var request = UpstreamRequest(method: method, url: url, headers: [], body: ByteBuffer()) else {
            return .failed("not an absolute http(s) URL")
        }
        switch await addressGuard.check(host: request.origin.host) {
        case .failure(let refusal):
            return .refused(refusal.message)
        case .success(let addresses):
            request.pin(to: addresses)
        }
        var transport = ProviderTransport()
        transport.requestTimeout = timeout
        transport.maxConnections = 1
        let client = ProviderHTTPClient(transport: transport, clock: clock)
        let outcome: Outcome
        do throws(DeliveryFailure) {
            let response = try await client.execute(request, timeout: timeout, providerName: "unsubscribe")
            outcome = .answered(status: response.status)
        } catch {
            outcome = .failed(error.message)
        }
        await client.shutdown()
        return outcome
    }
}
