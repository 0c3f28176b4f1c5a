import NIOCore
import PushRelayCore

extension APNsProvider: SelfChecking {
    /// The credentials (parsed when the provider was built), then one push over a real TLS + HTTP/2 connection to the
    /// configured host for a device token no device has: APNs answers `BadDeviceToken` (or, from a test service, takes
    /// it) only after it accepted the credentials and the topic, and names what it refused otherwise. Nothing reaches
    /// a device.
    public func selfCheck() async -> [SetupCheck] {
        let subject = "providers.\(name)"
        var checks: [SetupCheck] = []
        switch configuration.authentication {
        case .token(let keyID, let teamID, _):
            checks.append(SetupCheck(subject: subject, check: "APNs key", passed: true, detail: "key \(keyID), team \(teamID)"))
        case .certificate:
            checks.append(SetupCheck(subject: subject, check: "APNs certificate", passed: true, detail: "client certificate loaded"))
        }
        let endpoint = configuration.endpoint
        let payload: JSONValue = ["aps": ["content-available": 1]]
        let request = APNsPreparedRequest(
            path: "/3/device/\(Self.noDeviceToken)",
            deviceToken: Self.noDeviceToken,
            headers: [
                "apns-push-type": "background", "apns-priority": "5", "apns-topic": configuration.topic, "apns-id": RandomID.uuid(),
            ],
            payload: payload,
            body: JSONWriter.bytes(payload)
        )
        let response: UpstreamResponse
        do {
            response = try await post(request, jwt: providerToken())
        } catch {
            checks.append(
                SetupCheck(
                    subject: subject,
                    check: "APNs accepts the credentials",
                    passed: false,
                    detail: error.message,
                    remedy:
                        "PushRelay could not reach \(endpoint) over TLS + HTTP/2: check DNS and the firewall (outbound port 443), and ca_file if one is set."
                )
            )
            return checks
        }
        let reason = APNsOutcome.reason(of: response)
        if response.status == 200 || reason == .badDeviceToken {
            checks.append(
                SetupCheck(subject: subject, check: "APNs accepts the credentials", passed: true, detail: "\(endpoint), topic \(configuration.topic)")
            )
        } else {
            let said = reason?.rawValue ?? "HTTP \(response.status)"
            checks.append(
                SetupCheck(
                    subject: subject,
                    check: "APNs accepts the credentials",
                    passed: false,
                    detail: "\(endpoint) answered \(response.status) \(said)",
                    remedy: APNsRemedy.line(for: said, topic: configuration.topic)
                        ?? "APNs refused the push for a reason PushRelay does not know; look it up in Apple's list of APNs errors."
                )
            )
        }
        return checks
    }

    /// A device token of the right shape that no device has.
    static let noDeviceToken = String(repeating: "0", count: 64)
}
