import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PushRelayCore
import PushRelayProviders
import PushRelayStore

/// Relays one WebPush message to APNs or FCM: parse, build the toot-relay payload, check limits, deliver through the
/// dispatcher (quota, in-flight bound, deadline, retries, delivery log), and say unsubscribe when the token is dead.
final class WebPushRelayService: Sendable {
    /// What a successful relay answers: the message id (for `Location`) and the TTL kept.
    struct Accepted: Sendable {
        var messageID: String
        var ttl: Int
    }

    let settings: WebPushRelaySettings
    /// Provider instances (dispatcher names) per destination; nil when not configured.
    let apnsProduction: String?
    let apnsDevelopment: String?
    let fcm: String?
    let dispatcher: Dispatcher
    let limiter: SenderRateLimiter?
    let clock: any WallClock
    let logger: Logger

    init(
        settings: WebPushRelaySettings,
        apnsProduction: String?,
        apnsDevelopment: String?,
        fcm: String?,
        dispatcher: Dispatcher,
        clock: any WallClock,
        logger: Logger
    ) {
        self.settings = settings
        self.apnsProduction = apnsProduction
        self.apnsDevelopment = apnsDevelopment
        self.fcm = fcm
        self.dispatcher = dispatcher
        self.limiter = settings.maxRequestsPerMinutePerAddress > 0 ? SenderRateLimiter(limit: settings.maxRequestsPerMinutePerAddress) : nil
        self.clock = clock
        self.logger = logger
    }

    /// The app id relayed tokens are counted under in the quota ledger.
    static let ledgerAppID = "webpush-relay"

    /// Checked before the body is read: the per-sender limit.
    func admit(peer: String) throws(APIError) {
        if let limiter, !limiter.allow(peer, now: clock.now()) {
            throw APIError(
                .tooManyRequests,
                "RateLimited",
                "This address sent more than \(limiter.limit) relay requests in the last minute (relay.max_requests_per_minute_per_address); retry later.",
                headers: [.retryAfter: "60"]
            )
        }
    }

    func relay(_ target: RelayTarget, headers: WebPushHeaders, body: [UInt8]) async throws(APIError) -> Accepted {
        guard !body.isEmpty else { throw APIError.badRequest("The WebPush body is empty; send the encrypted message as the request body.") }
        let provider: String
        let notification: TranslatedNotification
        let platform: HAPlatform
        do {
            switch target.destination {
            case .apns(let production):
                guard let p = production ? apnsProduction : apnsDevelopment else {
                    throw APIError(.notFound, "NotConfigured", "Relaying to APNs is not configured on this server (relay.apns_provider).")
                }
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
                guard let p = fcm else {
                    throw APIError(.notFound, "NotConfigured", "Relaying to FCM is not configured on this server (relay.fcm_provider).")
                }
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
        } catch let e as RelayPayloadError {
            throw APIError(.contentTooLarge, "PayloadTooLarge", e.description)
        } catch let e as APIError {
            throw e
        } catch {
            throw APIError(.internalServerError, "InternalError", "Could not build the relayed payload.")
        }

        let delivery = Delivery(platform: platform, pushToken: target.token, appID: Self.ledgerAppID, notification: notification, kind: .webPushRelay)
        let quota: Dispatch.Quota =
            settings.dailyLimitPerToken > 0
            ? .counted(QuotaPolicy(dailyLimit: settings.dailyLimitPerToken, exemptCommands: false, exemptCritical: false))
            : .uncounted(checkDead: false)
        switch await dispatcher.dispatch(Dispatch(delivery, provider: provider, quota: quota)) {
        case .delivered(let receipt, _):
            let id = receipt.messageID.split(separator: "/").last.map(String.init) ?? receipt.messageID
            return Accepted(messageID: id, ttl: headers.acceptedTTL)
        case .refused(let r):
            throw APIError(
                .tooManyRequests,
                "RateLimited",
                "This device token has reached its \(r.maximum) relayed messages for today (relay.daily_limit_per_token); they resume after midnight UTC.",
                headers: [.retryAfter: "3600"]
            )
        case .dead(let dead, _):
            throw APIError(
                .gone,
                "InvalidToken",
                "The device token is no longer valid (\(dead.provider) reported \(dead.reason)); drop this subscription."
            )
        case .storageUnavailable:
            throw APIError.storageUnavailable
        case .failed(let failure, _):
            if case .invalidToken = failure, let url = headers.unsubscribeURL { unsubscribe(url) }
            throw Self.error(failure)
        }
    }

    /// Sends the DELETE the sender asked for in `Unsubscribe-URL`, only to `relay.unsubscribe_allowed_hosts`.
    private func unsubscribe(_ url: String) {
        guard UnsubscribePolicy.allows(url, allowedHosts: settings.unsubscribeAllowedHosts) else {
            logger.info("not sending the Unsubscribe-URL DELETE: its host is not in relay.unsubscribe_allowed_hosts")
            return
        }
        let logger = self.logger
        let addressGuard = OutboundAddressGuard(policy: settings.unsubscribeAddressPolicy)
        Task {
            // The host a sender chose must not be, or resolve to, a loopback or private address (SSRF).
            if case .failure(let refusal) = await addressGuard.check(url: url) {
                logger.notice("not sending the Unsubscribe-URL DELETE", metadata: ["problem": .string(refusal.message)])
                return
            }
            var request = HTTPClientRequest(url: url)
            request.method = .DELETE
            do {
                let response = try await Self.unsubscribeClient.execute(request, timeout: .seconds(10))
                _ = try? await response.body.collect(upTo: 64 * 1024)
                logger.info("sent Unsubscribe-URL DELETE", metadata: ["status": .stringConvertible(response.status.code)])
            } catch {
                logger.notice("Unsubscribe-URL DELETE failed", metadata: ["error": .string("\(error)")])
            }
        }
    }

    /// Follows no redirect: an answer must not send the DELETE on to an address that was not checked.
    private static let unsubscribeClient = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: .init(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(10)))
    )

    /// What the WebPush sender (or a call's caller) is told when the provider refused.
    static func error(_ failure: DeliveryFailure) -> APIError {
        .delivery(failure) { message in "The device token is no longer valid (\(message)); drop this subscription." }
    }
}
