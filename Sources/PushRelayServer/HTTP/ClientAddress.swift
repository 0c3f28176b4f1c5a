/// The address of the client whose request is being served: the connection's peer, or the client a trusted proxy's
/// forwarding headers name (`http.trusted_proxies`). Bound by the HTTP layer for the task serving the request; the
/// dispatcher's waiting lines are kept per client with it (`ProviderGate`). Nil for work no request started.
enum ClientAddress {
    @TaskLocal static var current: String?
}
