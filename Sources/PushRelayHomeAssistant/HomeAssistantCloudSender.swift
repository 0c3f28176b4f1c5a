import Foundation
import Logging
import PushRelayCore
import PushRelayDelivery
import PushRelayHTTP
import PushRelayProviders
import PushRelayPushChannel
import PushRelayStore

/// Sends a Home Assistant notification by the cloud route, through the push provider its app's `apps` entry names:
/// translate for the platform, seal when asked, and hand it to the dispatcher under the token's daily quota (the
/// rate-limit notice included). Also what an unconfirmed push-channel message falls back to.
package struct HomeAssistantCloudSender: Sendable {
    package let apps: AppProviders
    package let dispatcher: Dispatcher
    package let quota: any QuotaLedger
    package let policy: QuotaPolicy
    package let sealer: PayloadSealer
    /// Where a local-only app's notification waits for its device's channel.
    package let localOnly: LocalOnlyQueue
    package let iosOptions: IOSTranslationOptions
    package let clock: any TimePort
    package let logger: Logger

    package init(
        apps: AppProviders,
        dispatcher: Dispatcher,
        quota: any QuotaLedger,
        policy: QuotaPolicy,
        sealer: PayloadSealer,
        localOnly: LocalOnlyQueue,
        iosOptions: IOSTranslationOptions,
        clock: any TimePort,
        logger: Logger
    ) {
        self.apps = apps
        self.dispatcher = dispatcher
        self.quota = quota
        self.policy = policy
        self.sealer = sealer
        self.localOnly = localOnly
        self.iosOptions = iosOptions
        self.clock = clock
        self.logger = logger
    }

    package func translate(_ n: HANotification, platform: HAPlatform) -> TranslatedNotification {
        switch platform {
        case .android: return AndroidTranslation.translate(n)
        case .ios: return IOSTranslation.translate(n, options: iosOptions, now: clock.now())
        }
    }

    /// Whether `appID`'s notifications have a cloud route: a provider that is not `none` and is configured.
    func hasCloudRoute(appID: String?) -> Bool {
        guard let provider = apps.provider(for: appID), provider != AppProviders.localOnly else { return false }
        return dispatcher.has(provider: provider)
    }

    /// Sends `n` through its app's provider. A local-only app's notification is queued for its device's channel instead,
    /// within the queue's bounds (`LocalOnlyQueue`).
    package func send(_ n: HANotification, platform: HAPlatform) async -> HomeAssistantOutcome {
        await sendWithEvidence(n, platform: platform).outcome
    }

    /// `send`, and what the outcome proves about `n`'s pair: `.proof` when the provider took a notification for the
    /// push token counted on its quota (the provider knows the token), else `.none` (queued, uncounted, sent to a Live
    /// Activity's token, not accepted).
    func sendWithEvidence(
        _ n: HANotification,
        platform: HAPlatform
    ) async -> (outcome: HomeAssistantOutcome, evidence: PushChannelPairEvidence) {
        let token = n.pushToken
        let appID = n.registrationInfo.appID
        guard let providerName = apps.provider(for: appID) else {
            return (
                .misconfigured("No provider is configured for app id '\(appID ?? "(none)")'. Add an entry to 'apps' in the PushRelay config."), .none
            )
        }
        if providerName == AppProviders.localOnly {
            do {
                switch try await localOnly.queue(n, platform: platform) {
                case .queued(let id): return (await accepted(n, messageID: "queued:\(id)"), .none)
                case .deviceFull(let waiting): return (.deviceQueueFull(waiting: waiting), .none)
                case .full: return (.queueFull(retryAfterSeconds: LocalOnlyQueue.retryAfterSeconds), .none)
                }
            } catch {
                logger.error("could not queue a local-only notification", metadata: ["error": .string("\(error)")])
                return (.storageUnavailable, .none)
            }
        }
        guard dispatcher.has(provider: providerName) else {
            return (
                .misconfigured("No provider is configured for app id '\(appID ?? "(none)")'. Add an entry to 'apps' in the PushRelay config."), .none
            )
        }
        let plain = translate(n, platform: platform)
        if let headers = plain.apns?.headers, let problem = APNsHeaders.problem(headers) {
            // The caller's own error: answered before the quota or the provider is touched.
            return (.failed(.invalidPayload(reason: APNsHeaders.badHeaderReason, message: problem), rateLimits: nil), .none)
        }
        let translated: TranslatedNotification
        do {
            translated = try await sealer.sealIfRegistered(plain, n, platform: platform)
        } catch .storageUnavailable {
            return (.storageUnavailable, .none)
        } catch {
            return (.internalError("Could not encrypt the notification for this device."), .none)
        }
        let delivery = Delivery(platform: platform, pushToken: token, appID: appID, notification: translated)
        let exempt = policy.isExempt(translated)
        let quotaMode: Dispatch.Quota = exempt ? .uncounted(checkDead: true) : .counted(policy, webhookID: n.registrationInfo.webhookID)
        // A Live Activity push is counted (and remembered dead) on the token APNs receives, the activity's own.
        let account = n.liveActivityToken ?? token
        switch await dispatcher.dispatch(
            Dispatch(delivery, provider: providerName, account: account, quota: quotaMode, client: ClientAddress.current)
        ) {
        case .delivered(let receipt, let limits):
            guard let limits = await limits.asyncOr({ await rateLimits(pushToken: account, appID: appID) }) else {
                return (.storageUnavailable, .none)
            }
            let accepted = HomeAssistantOutcome.accepted(
                messageID: receipt.messageID,
                sentPayload: JSONWriter.bytes(receipt.sentPayload),
                rateLimits: limits
            )
            // The provider knows the token it was given: the push token, unless a Live Activity's token went instead.
            return (accepted, !exempt && n.liveActivityToken == nil ? .proof : .none)
        case .refused(let reservation):
            if reservation.decision.sendNotice {
                await sendRateLimitNotice(platform: platform, token: token, appID: appID, provider: providerName, reservation: reservation)
            }
            logger.debug("rate limited", metadata: ["token": .string(TokenDisplay.short(token)), "maximum": .stringConvertible(reservation.maximum)])
            return (.rateLimited(maximum: reservation.maximum, rateLimits: reservation.rateLimits), .none)
        case .dead(let dead, let limits):
            guard let limits = await limits.asyncOr({ await rateLimits(pushToken: account, appID: appID) }) else {
                return (.storageUnavailable, .none)
            }
            return (.deadToken(dead, rateLimits: limits), .none)
        case .failed(let failure, let limits):
            return (.failed(failure, rateLimits: limits), .none)
        case .storageUnavailable:
            return (.storageUnavailable, .none)
        case .storageBusy:
            return (.storageBusy, .none)
        }
    }

    /// 201 for a notification delivered or queued locally: the event as `sentPayload`, the untouched cloud quota.
    package func accepted(_ n: HANotification, messageID: String) async -> HomeAssistantOutcome {
        guard let limits = await rateLimits(pushToken: n.pushToken, appID: n.registrationInfo.appID) else { return .storageUnavailable }
        return .accepted(
            messageID: messageID,
            sentPayload: JSONWriter.bytes(PushChannelWire.notificationEvent(n, confirmID: nil)),
            rateLimits: limits
        )
    }

    /// The token's quota today, read-only; nil when the quota database cannot be read.
    package func rateLimits(pushToken: String, appID: String?) async -> RateLimits? {
        do {
            return try await quota.rateLimits(pushToken: pushToken, appID: appID, day: UTCDay(clock.now()), policy: policy)
        } catch {
            logger.error("quota storage failed", metadata: ["error": .string("\(error)")])
            return nil
        }
    }

    private func sendRateLimitNotice(platform: HAPlatform, token: String, appID: String?, provider: String, reservation: QuotaReservation) async {
        let notice = RateLimitNotice.translate(
            platform: platform,
            pushToken: token,
            maximum: reservation.maximum,
            resetsAt: reservation.rateLimits.resetsAt
        )
        let delivery = Delivery(platform: platform, pushToken: token, appID: appID, notification: notice, kind: .rateLimitNotice)
        _ = await dispatcher.dispatch(Dispatch(delivery, provider: provider, quota: .uncounted(checkDead: false), client: ClientAddress.current))
        logger.info(
            "sent rate-limit notice",
            metadata: ["token": .string(TokenDisplay.short(token)), "maximum": .stringConvertible(reservation.maximum)]
        )
    }
}

extension Optional where Wrapped: Sendable {
    /// The value, or what `fallback` finds when there is none.
    fileprivate func asyncOr(_ fallback: () async -> Wrapped?) async -> Wrapped? {
        if let self { return self }
        return await fallback()
    }
}

/// An unconfirmed websocket message goes by its app's cloud route.
extension HomeAssistantCloudSender: PushChannelFallback {
    package func fallBack(_ n: HANotification, platform: HAPlatform) async -> String? {
        let outcome = await send(n, platform: platform)
        return outcome.isAccepted ? nil : outcome.summary
    }
}
