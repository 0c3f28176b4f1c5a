import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PushRelayCore
import PushRelayProviders
import PushRelayStore

/// Relays one WebPush message to APNs or FCM: parse, build the toot-relay payload, check limits, deliver through the
/// shared `DeliveryRunner` (in-flight bound, deadline, retries), and say unsubscribe when the token is dead.
final class WebPushRelayService: Sendable {
    /// What a successful relay answers: the message id (for `Location`) and the TTL kept.
    struct Accepted: Sendable {
        var messageID: String
        var ttl: Int
    }

    let settings: WebPushRelaySettings
    let apnsProduction: DeliveryRunner?
    let apnsDevelopment: DeliveryRunner?
    let fcm: DeliveryRunner?
    let store: QuotaStore
    let limiter: SenderRateLimiter?
    let clock: any WallClock
    let logger: Logger

    init(settings: WebPushRelaySettings, apnsProduction: DeliveryRunner?, apnsDevelopment: DeliveryRunner?, fcm: DeliveryRunner?, store: QuotaStore,
         clock: any WallClock, logger: Logger) {
        self.settings = settings
        self.apnsProduction = apnsProduction
        self.apnsDevelopment = apnsDevelopment
        self.fcm = fcm
        self.store = store
        self.limiter = settings.maxRequestsPerMinutePerAddress > 0 ? SenderRateLimiter(limit: settings.maxRequestsPerMinutePerAddress) : nil
        self.clock = clock
        self.logger = logger
    }

    /// The app id relayed tokens are counted under in the quota ledger.
    static let ledgerAppID = "webpush-relay"

    /// Checked before the body is read: the per-sender limit.
    func admit(peer: String) throws(APIError) {
        if let limiter, !limiter.allow(peer, now: clock.now()) {
            throw APIError(.tooManyRequests, "RateLimited",
                           "This address sent more than \(limiter.limit) relay requests in the last minute (relay.max_requests_per_minute_per_address); retry later.",
                           headers: [.retryAfter: "60"])
        }
    }

    func relay(_ target: RelayTarget, headers: WebPushHeaders, body: [UInt8]) async throws(APIError) -> Accepted {
        guard !body.isEmpty else { throw APIError.badRequest("The WebPush body is empty; send the encrypted message as the request body.") }
        let runner: DeliveryRunner
        let notification: TranslatedNotification
        let platform: HAPlatform
        do {
            switch target.destination {
            case .apns(let production):
                guard let r = production ? apnsProduction : apnsDevelopment else {
                    throw APIError(.notFound, "NotConfigured", "Relaying to APNs is not configured on this server (relay.apns_provider).")
                }
                runner = r
                platform = .ios
                notification = try RelayPayload.apns(body: body, headers: headers, extra: target.extra, alertText: settings.alertText, now: clock.now())
            case .fcm:
                guard let r = fcm else {
                    throw APIError(.notFound, "NotConfigured", "Relaying to FCM is not configured on this server (relay.fcm_provider).")
                }
                runner = r
                platform = .android
                notification = try RelayPayload.fcm(token: target.token, body: body, headers: headers, extra: target.extra, alertText: settings.alertText)
            }
        } catch let e as RelayPayloadError {
            throw APIError(.contentTooLarge, "PayloadTooLarge", e.description)
        } catch let e as APIError {
            throw e
        } catch {
            throw APIError(.internalServerError, "InternalError", "Could not build the relayed payload.")
        }

        let now = clock.now()
        let reservation = try await reserve(target.token, now: now)
        let delivery = Delivery(platform: platform, pushToken: target.token, appID: Self.ledgerAppID, notification: notification)
        let outcome = await runner.run(delivery)
        await record(outcome, delivery: delivery, provider: runner.provider.name, reservation: reservation)
        switch outcome {
        case .success(let receipt):
            let id = receipt.messageID.split(separator: "/").last.map(String.init) ?? receipt.messageID
            return Accepted(messageID: id, ttl: headers.acceptedTTL)
        case .failure(let failure):
            if case .invalidToken = failure, let url = headers.unsubscribeURL { unsubscribe(url) }
            throw Self.error(failure)
        }
    }

    /// Reserves a quota slot when `relay.daily_limit_per_token` is set; also answers 410 for tokens remembered dead.
    private func reserve(_ token: String, now: Date) async throws(APIError) -> QuotaReservation? {
        guard settings.dailyLimitPerToken > 0 else { return nil }
        let policy = QuotaPolicy(dailyLimit: settings.dailyLimitPerToken, exemptCommands: false, exemptCritical: false)
        let result: QuotaStore.ReserveResult
        do {
            result = try await store.reserveUnlessDead(pushToken: token, appID: Self.ledgerAppID, day: UTCDay(now), policy: policy, now: now)
        } catch {
            logger.error("relay quota storage failed", metadata: ["error": .string("\(error)")])
            throw APIError(.serviceUnavailable, "StorageUnavailable", "PushRelay could not update its quota database; try again shortly.",
                           headers: [.retryAfter: "5"])
        }
        switch result {
        case .dead(let dead, _):
            throw APIError(.gone, "InvalidToken", "The device token is no longer valid (\(dead.provider) reported \(dead.reason)); drop this subscription.")
        case .reserved(let r):
            guard r.decision.allowed else {
                throw APIError(.tooManyRequests, "RateLimited",
                               "This device token has reached its \(r.maximum) relayed messages for today (relay.daily_limit_per_token); they resume after midnight UTC.",
                               headers: [.retryAfter: "3600"])
            }
            return r
        }
    }

    private func record(_ outcome: Result<DeliveryReceipt, DeliveryFailure>, delivery: Delivery, provider: String, reservation: QuotaReservation?) async {
        guard let reservation else {
            if case .failure(let f) = outcome {
                logger.notice("relay delivery failed", metadata: ["token": .string(TokenDisplay.short(delivery.pushToken)), "provider": .string(provider), "reason": .string(f.message)])
            }
            return
        }
        let record = DeliveryRecord(at: clock.now(), pushToken: delivery.pushToken, appID: Self.ledgerAppID, platform: delivery.platform.rawValue,
                                    provider: provider, kind: "webpush_relay", counted: true, outcome: outcome.outcomeName,
                                    messageID: try? outcome.get().messageID, errorMessage: outcome.failureMessage)
        if case .success = outcome {
            let logger = self.logger
            store.recordDelivered(record, day: reservation.day) { error in logger.error("could not write the delivery log", metadata: ["error": .string("\(error)")]) }
            return
        }
        var dead: DeadMark?
        if case .failure(.invalidToken(let reason, let message)) = outcome {
            dead = DeadMark(provider: provider, reason: reason, message: message, until: clock.now().addingTimeInterval(7 * 86_400))
        }
        do {
            _ = try await store.complete(reservation, record: record, markDead: dead)
        } catch {
            logger.error("could not record relay outcome", metadata: ["token": .string(TokenDisplay.short(delivery.pushToken)), "error": .string("\(error)")])
        }
    }

    /// Sends the DELETE the sender asked for in `Unsubscribe-URL`, only to `relay.unsubscribe_allowed_hosts`.
    private func unsubscribe(_ url: String) {
        guard UnsubscribePolicy.allows(url, allowedHosts: settings.unsubscribeAllowedHosts) else {
            logger.info("not sending the Unsubscribe-URL DELETE: its host is not in relay.unsubscribe_allowed_hosts")
            return
        }
        let logger = self.logger
        Task {
            var request = HTTPClientRequest(url: url)
            request.method = .DELETE
            do {
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                _ = try? await response.body.collect(upTo: 64 * 1024)
                logger.info("sent Unsubscribe-URL DELETE", metadata: ["status": .stringConvertible(response.status.code)])
            } catch {
                logger.notice("Unsubscribe-URL DELETE failed", metadata: ["error": .string("\(error)")])
            }
        }
    }

    /// What the WebPush sender is told when the provider refused.
    static func error(_ failure: DeliveryFailure) -> APIError {
        switch failure {
        case .invalidToken(let reason, let message):
            return APIError(.gone, "InvalidToken", "The device token is no longer valid (\(message)); drop this subscription.", fields: ["errorCode": .string(reason)])
        case .payloadTooLarge(let message):
            return APIError(.contentTooLarge, "PayloadTooLarge", message)
        case .invalidPayload(let reason, let message):
            return APIError(.badRequest, "InvalidPayload", message, fields: ["errorCode": .string(reason)])
        case .transient(let reason, let message, let retryAfter):
            return APIError(.serviceUnavailable, "ProviderUnavailable", message, fields: ["errorCode": .string(reason)],
                            headers: [.retryAfter: String(retryAfter ?? 30)])
        case .invalidTarget(let reason, let message):
            return .invalidTarget(reason: reason, message: message)
        case .configuration(let message):
            return .configuration(message)
        }
    }
}
