import Logging
import PushRelayCore
import PushRelayProviders

extension SetupDoctor {
    /// One test notification for a device's push token, through the provider its app routes to: FCM checks it, token
    /// included, without delivering it (`validate_only`), and with `send` it is delivered. APNs has no such check, so
    /// without `send` nothing is asked of it; with `send`, a `BadDeviceToken` names the environment mismatch.
    public static func tryToken(_ token: String, appID: String?, send: Bool, config: PushRelayConfig, logger: Logger) async -> [SetupCheck] {
        let subject = "token \(TokenDisplay.short(token))"
        let registry: ProviderRegistry
        do {
            registry = try await PushRelayApplication.makeRegistry(config, logger: logger)
        } catch {
            return [
                SetupCheck(
                    subject: subject,
                    check: "provider",
                    passed: false,
                    detail: "\(error)",
                    remedy: "Fix the provider's options as the message says."
                )
            ]
        }
        let checks = await tryToken(token, appID: appID, send: send, registry: registry, config: config, subject: subject)
        for p in registry.providers.values { await p.shutdown() }
        return checks
    }

    private static func tryToken(
        _ token: String,
        appID: String?,
        send: Bool,
        registry: ProviderRegistry,
        config: PushRelayConfig,
        subject: String
    ) async -> [SetupCheck] {
        guard let name = registry.routes.provider(for: appID), name != AppRoutes.localOnly, let provider = registry.providers[name] else {
            return [
                SetupCheck(
                    subject: subject,
                    check: "provider",
                    passed: false,
                    detail: "app id '\(appID ?? "(none)")' routes to no push provider",
                    remedy: "Pass the app id the companion app registers with (--app), or add an entry for it to 'apps'."
                )
            ]
        }
        let platform: HAPlatform = provider is APNsProvider || (appID?.contains("io.robbie.HomeAssistant") ?? false) ? .ios : .android
        let delivery: Delivery
        do {
            let n = try HANotification(body: [
                "message": "PushRelay doctor: this device gets PushRelay's notifications.", "title": "PushRelay",
                "push_token": .string(token), "registration_info": ["app_id": appID.map(JSONValue.string) ?? .null],
            ])
            let translated =
                platform == .ios
                ? IOSTranslation.translate(n, options: IOSTranslationOptions(companionAppIDs: config.iosCompanionAppIDs))
                : AndroidTranslation.translate(n)
            delivery = Delivery(platform: platform, pushToken: token, appID: appID, notification: translated)
        } catch {
            return [SetupCheck(subject: subject, check: "notification", passed: false, detail: "\(error)")]
        }
        var checks: [SetupCheck] = []
        if let fcm = provider as? FCMProvider {
            checks.append(
                await attempt(subject, "FCM validates a notification (nothing delivered)", name) { () async throws(DeliveryFailure) in
                    try await fcm.validate(delivery)
                }
            )
        } else if !send {
            checks.append(
                SetupCheck(
                    subject: subject,
                    check: "not sent",
                    passed: true,
                    detail: "providers.\(name) has no check that delivers nothing; add --send to deliver one notification"
                )
            )
        }
        if send {
            checks.append(
                await attempt(subject, "a notification is delivered", name) { () async throws(DeliveryFailure) in try await provider.send(delivery) }
            )
        }
        return checks
    }

    private static func attempt(
        _ subject: String,
        _ check: String,
        _ provider: String,
        _ body: () async throws(DeliveryFailure) -> DeliveryReceipt
    ) async -> SetupCheck {
        do {
            let receipt = try await body()
            return SetupCheck(subject: subject, check: check, passed: true, detail: "providers.\(provider) answered \(receipt.messageID)")
        } catch {
            let reason: String
            switch error {
            case .invalidToken(let r, _), .invalidPayload(let r, _), .invalidTarget(let r, _), .transient(let r, _, _): reason = r
            case .payloadTooLarge: reason = "PayloadTooLarge"
            case .configuration: reason = "configuration"
            }
            return SetupCheck(subject: subject, check: check, passed: false, detail: "providers.\(provider): \(reason)", remedy: error.message)
        }
    }
}
