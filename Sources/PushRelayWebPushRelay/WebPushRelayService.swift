import Logging
import PushRelayCore
import PushRelayDelivery
import PushRelayHTTP
import PushRelayProviders
import PushRelayStore

/// What relaying one WebPush message came to. `WebPushRelayRoutes` turns it into the HTTP answer.
package enum WebPushRelayOutcome: Sendable, Equatable {
    /// Delivered: the message id (for `Location`) and the TTL kept.
    case accepted(messageID: String, ttl: Int)
    case emptyBody
    /// This server has no provider for the destination (`relay.apns_provider` / `relay.fcm_provider`).
    case notConfigured(RelayTarget.Destination)
    /// The relayed payload would be larger than the provider takes.
    case payloadTooLarge(String)
    /// The token has had its `relay.daily_limit_per_token` messages today.
    case tokenLimitReached(maximum: Int)
    /// The provider reported the token dead earlier; nothing was sent.
    case deadToken(provider: String, reason: String)
    case storageUnavailable
    /// The quota reservation did not commit in time; nothing was sent or counted.
    case storageBusy
    case failed(DeliveryFailure)
}

/// Relays one WebPush message to APNs or FCM: parse, build the toot-relay payload, check limits, deliver through the
/// dispatcher (quota, in-flight bound, deadline, retries, delivery log), and say unsubscribe when the token is dead.
/// Returns domain outcomes; only `WebPushRelayRoutes` knows HTTP.
package final class WebPushRelayService: Sendable {
    package let settings: WebPushRelaySettings
    /// Provider instances (dispatcher names) per destination; nil when not configured.
    package let apnsProduction: String?
    package let apnsDevelopment: String?
    package let fcm: String?
    package let dispatcher: Dispatcher
    package let limiter: SenderRateLimiter?
    /// Runs the `Unsubscribe-URL` DELETEs, which nobody waits for.
    package let work: BackgroundWork
    /// Bounds the DELETEs running and waiting.
    let unsubscribes: UnsubscribeLine
    package let clock: any TimePort
    package let logger: Logger

    package init(
        settings: WebPushRelaySettings,
        apnsProduction: String?,
        apnsDevelopment: String?,
        fcm: String?,
        dispatcher: Dispatcher,
        work: BackgroundWork,
        unsubscribes: UnsubscribeLine = UnsubscribeLine(),
        clock: any TimePort,
        logger: Logger
    ) {
        self.settings = settings
        self.work = work
        self.unsubscribes = unsubscribes
        self.apnsProduction = apnsProduction
        self.apnsDevelopment = apnsDevelopment
        self.fcm = fcm
        self.dispatcher = dispatcher
        self.limiter = settings.maxRequestsPerMinutePerAddress > 0 ? SenderRateLimiter(limit: settings.maxRequestsPerMinutePerAddress) : nil
        self.clock = clock
        self.logger = logger
    }

    /// The app id relayed tokens are counted under in the quota ledger.
    package static let ledgerAppID = "webpush-relay"

    /// The key the relay's quota, dead-token memory and delivery log know a device token by: `relay:<token>`.
    package static func account(_ token: String) -> String { "relay:" + token }

    /// The per-sender limit a minute (`relay.max_requests_per_minute_per_address`), if there is one.
    package var senderLimit: Int? { limiter?.limit }

    /// Checked before the body is read: whether `peer` is within the per-sender limit (counting this request).
    package func admits(peer: String) -> Bool {
        guard let limiter else { return true }
        return limiter.allow(peer, now: clock.now())
    }

    package func relay(_ target: RelayTarget, headers: WebPushHeaders, body: [UInt8]) async -> WebPushRelayOutcome {
        guard !body.isEmpty else { return .emptyBody }
        let provider: String
        let notification: TranslatedNotification
        let platform: HAPlatform
        do throws(RelayPayloadError) {
            switch target.destination {
            case .apns(let production):
                guard let p = production ? apnsProduction : apnsDevelopment else { return .notConfigured(target.destination) }
                provider = p
                platform = .ios
                notification = try RelayPayload.apns(
                    body: body,
                    headers: headers,
                    extra: target.extra,
                    alertText: settings.alertText,
                    now: clock.now()
                )
            case .fcm:
                guard let p = fcm else { return .notConfigured(target.destination) }
                provider = p
                platform = .android
                notification = try RelayPayload.fcm(
                    token: target.token,
                    body: body,
                    headers: headers,
                    extra: target.extra,
                    alertText: settings.alertText
                )
            }
        } catch {
            return .payloadTooLarge(error.description)
        }

        let delivery = Delivery(platform: platform, pushToken: target.token, appID: Self.ledgerAppID, notification: notification, kind: .webPushRelay)
        let quota: Dispatch.Quota =
            settings.dailyLimitPerToken > 0
            ? .counted(QuotaPolicy(dailyLimit: settings.dailyLimitPerToken, exemptCommands: false, exemptCritical: false))
            : .uncounted(checkDead: false)
        // The relay's own quota row and dead-token memory: a sender who knows a device token spends only the relay's
        // allowance, never the device's Home Assistant quota, and cannot mark the token dead for Home Assistant.
        switch await dispatcher.dispatch(
            Dispatch(delivery, provider: provider, account: Self.account(target.token), quota: quota, client: ClientAddress.current)
        ) {
        case .delivered(let receipt, _):
            let id = receipt.messageID.split(separator: "/").last.map(String.init) ?? receipt.messageID
            return .accepted(messageID: id, ttl: headers.acceptedTTL)
        case .refused(let r):
            return .tokenLimitReached(maximum: r.maximum)
        case .dead(let dead, _):
            return .deadToken(provider: dead.provider, reason: dead.reason)
        case .storageUnavailable:
            return .storageUnavailable
        case .storageBusy:
            return .storageBusy
        case .failed(let failure, _):
            if case .invalidToken = failure, let url = headers.unsubscribeURL { unsubscribe(url) }
            return .failed(failure)
        }
    }

    /// Sends the DELETE the sender asked for in `Unsubscribe-URL`, only to `relay.unsubscribe_allowed_hosts`, and
    /// only as many at a time as `unsubscribes` lets through (the rest wait, or are dropped past its bound).
    private func unsubscribe(_ url: String) {
        guard UnsubscribePolicy.allows(url, allowedHosts: settings.unsubscribeAllowedHosts) else {
            logger.info("not sending the Unsubscribe-URL DELETE: its host is not in relay.unsubscribe_allowed_hosts")
            return
        }
        switch unsubscribes.submit(url) {
        case .run: send(url)
        case .queued: break
        case .dropped:
            logger.notice(
                "Unsubscribe-URL DELETE dropped: too many running and waiting",
                metadata: ["dropped": .stringConvertible(unsubscribes.figures.dropped)]
            )
        }
    }

    /// Sends one DELETE as background work, then the next one waiting, if any.
    private func send(_ url: String) {
        let logger = self.logger
        let clock = self.clock
        let addressGuard = OutboundAddressGuard(policy: settings.unsubscribeAddressPolicy)
        work.submit { [self] in
            // The host a sender chose must not be, or resolve to, a loopback or private address (SSRF); the DELETE goes
            // to the addresses checked, and no redirect is followed.
            switch await OneOffRequest.send(method: "DELETE", url: url, addressGuard: addressGuard, timeout: .seconds(10), clock: clock) {
            case .answered(let status):
                logger.info("sent Unsubscribe-URL DELETE", metadata: ["status": .stringConvertible(status)])
            case .refused(let problem):
                logger.notice("not sending the Unsubscribe-URL DELETE", metadata: ["problem": .string(problem)])
            case .failed(let problem):
                logger.notice("Unsubscribe-URL DELETE failed", metadata: ["error": .string(problem)])
            }
            if let next = unsubscribes.finished() { send(next) }
        }
    }
}
