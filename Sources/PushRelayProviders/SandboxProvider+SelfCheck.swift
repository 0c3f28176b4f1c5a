import PushRelayCore

extension SandboxProvider: SelfChecking {
    /// Always passes: the sandbox delivers nothing, it records each notification in the delivery log.
    public func selfCheck() async -> [SetupCheck] {
        [
            SetupCheck(
                subject: "providers.\(name)",
                check: "sandbox",
                passed: true,
                detail: "nothing leaves this machine; notifications are recorded in the delivery log"
            )
        ]
    }
}
