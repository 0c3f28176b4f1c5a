import Foundation
import Logging
import PushRelayConfiguration
import PushRelayCore
import PushRelayProviders

extension SetupDoctor {
    /// One test notification for a device's push token, through the provider its app routes to: FCM checks it, token
    /// included, without delivering it (`validate_only`), and with `send` it is delivered. APNs has no such check, so
    /// without `send` nothing is asked of it; with `send`, a `BadDeviceToken` is tried in the other APNs environment
    /// (at `endpoint(environment)`, Apple's host by default), which tells which one the token belongs to.
    public static func tryToken(
        _ token: String,
        appID: String?,
        send: Bool,
        config: PushRelayConfig,
        logger: Logger,
        endpoint: @escaping @Sendable (APNsProvider.Environment) -> String = { $0.endpoint }
    ) async -> [SetupCheck] {
        let subject = "token \(TokenDisplay.short(token))"
        let registry: ProviderRegistry
        switch await makeRegistry(config, subject: subject, logger: logger) {
        case .success(let r): registry = r
        case .failure(let failed): return [failed.check]
        }
        var checks = await tryToken(token, appID: appID, send: send, registry: registry, config: config, subject: subject)
        if let name = registry.apps.provider(for: appID), let apns = registry.providers[name] as? APNsProvider,
            checks.last.map({ !$0.passed && $0.detail.hasSuffix("BadDeviceToken") }) == true
        {
            checks.append(
                await otherEnvironment(of: apns, token: token, appID: appID, config: config, subject: subject, endpoint: endpoint, logger: logger)
            )
        }
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
        guard let name = registry.apps.provider(for: appID), name != AppProviders.localOnly, let provider = registry.providers[name] else {
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
        // An iOS app is one of `ios.companion_app_ids` (as Home Assistant's iOS notification would be translated), or
        // any app routed to APNs.
        let isIOS = provider is APNsProvider || IOSTranslationOptions(companionAppIDs: config.iosCompanionAppIDs).isCompanionApp(appID)
        let platform: HAPlatform = isIOS ? .ios : .android
        let delivery: Delivery
        do {
            delivery = try testDelivery(token: token, appID: appID, platform: platform, config: config)
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
            case .invalidToken(let r, _), .invalidPayload(let r, _), .invalidTarget(let r, _), .transient(let r, _, _), .throttled(let r, _, _):
                reason = r
            case .payloadTooLarge: reason = "PayloadTooLarge"
            case .configuration: reason = "configuration"
            }
            return SetupCheck(subject: subject, check: check, passed: false, detail: "providers.\(provider): \(reason)", remedy: error.message)
        }
    }

    /// The same notification in the APNs environment the provider is not configured for.
    private static func otherEnvironment(
        of apns: APNsProvider,
        token: String,
        appID: String?,
        config: PushRelayConfig,
        subject: String,
        endpoint: (APNsProvider.Environment) -> String,
        logger: Logger
    ) async -> SetupCheck {
        var configuration = apns.configuration
        let configured = configuration.environment
        let other: APNsProvider.Environment = configured == .production ? .sandbox : .production
        configuration.environment = other
        configuration.endpoint = endpoint(other)
        let probe = APNsProvider(name: apns.name, configuration: configuration, logger: logger)
        let check: SetupCheck
        do {
            _ = try await probe.send(try testDelivery(token: token, appID: appID, platform: .ios, config: config))
            check = SetupCheck(
                subject: subject,
                check: "the token's APNs environment",
                passed: false,
                detail: "the token belongs to \(other.rawValue), providers.\(apns.name) sends to \(configured.rawValue)",
                remedy:
                    "Set environment: \(other.rawValue) for providers.\(apns.name) (a Debug build's token is a sandbox one), or route this app to a provider for \(other.rawValue)."
            )
        } catch {
            check = SetupCheck(
                subject: subject,
                check: "the token's APNs environment",
                passed: false,
                detail: "\(other.rawValue) refused it too (\((error as? DeliveryFailure)?.message ?? "\(error)"))",
                remedy:
                    "The token is not a device token of this app in either environment: open the Home Assistant companion app on that device so it registers a new token."
            )
        }
        await probe.shutdown()
        return check
    }

    /// The doctor's test notification, translated for `platform` as Home Assistant's would be.
    static func testDelivery(token: String, appID: String?, platform: HAPlatform, config: PushRelayConfig) throws -> Delivery {
        let n = try HANotification(body: [
            "message": "PushRelay doctor: this device gets PushRelay's notifications.", "title": "PushRelay",
            "push_token": .string(token), "registration_info": ["app_id": appID.map(JSONValue.string) ?? .null],
        ])
        let translated =
            platform == .ios
            // The doctor's notification has no Live Activity: no time of the translation's shows in it.
            ? IOSTranslation.translate(n, options: IOSTranslationOptions(companionAppIDs: config.iosCompanionAppIDs), now: Date())
            : AndroidTranslation.translate(n)
        return Delivery(platform: platform, pushToken: token, appID: appID, notification: translated)
    }
}
