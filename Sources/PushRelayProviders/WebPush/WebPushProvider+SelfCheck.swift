import PushRelayCore

extension WebPushProvider: SelfChecking {
    /// The VAPID key (parsed when the provider was built) and the public key browsers subscribe with.
    public func selfCheck() async -> [SetupCheck] {
        [SetupCheck(subject: "providers.\(name)", check: "VAPID key", passed: true, detail: "applicationServerKey \(applicationServerKey)")]
    }
}
