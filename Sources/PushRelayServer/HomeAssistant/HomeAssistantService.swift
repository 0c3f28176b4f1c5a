import Foundation
import Logging
import PushRelayCore
import PushRelayProviders
import PushRelayStore

/// The shared delivery service: translate, route, apply the quota, deliver, record. No HTTP in here, so the
/// Home Assistant endpoints, the websocket channel and other front doors all use the same rules.
public final class HomeAssistantService: Sendable {
    public let store: QuotaStore
    public let registry: ProviderRegistry
    public let policy: QuotaPolicy
    public let clock: any WallClock
    let settings: PushRelayConfig.Delivery
    let iosOptions: IOSTranslationOptions
    let logger: Logger
    /// One runner (own in-flight bound) per provider instance.
    private let runners: [String: DeliveryRunner]
    /// The websocket channels: local delivery first.
    let hub: LocalPushHub?

    public convenience init(store: QuotaStore, registry: ProviderRegistry, policy: QuotaPolicy, delivery: PushRelayConfig.Delivery = .init(),
                            clock: any WallClock, iosOptions: IOSTranslationOptions = .init(), logger: Logger) {
        self.init(store: store, registry: registry, policy: policy, delivery: delivery, clock: clock, iosOptions: iosOptions, hub: nil, logger: logger)
    }

    init(store: QuotaStore, registry: ProviderRegistry, policy: QuotaPolicy, delivery: PushRelayConfig.Delivery,
         clock: any WallClock, iosOptions: IOSTranslationOptions, hub: LocalPushHub?, logger: Logger) {
        self.hub = hub
        self.store = store
        self.registry = registry
        self.policy = policy
        self.settings = delivery
        self.clock = clock
        self.iosOptions = iosOptions
        self.logger = logger
        self.runners = registry.providers.mapValues {
            DeliveryRunner(provider: $0, gate: ProviderGate(limit: delivery.maxInFlight), retry: delivery.retryPolicy, deadlineMs: delivery.deadlineMs)
        }
    }

    /// The outcome of one Home Assistant POST, ready to be rendered.
    public struct Reply: Sendable {
        public var status: Int
        /// The JSON body, already encoded.
        public var body: [UInt8]
    }

    func translate(_ n: HANotification, platform: HAPlatform) -> TranslatedNotification {
        switch platform {
        case .android: return AndroidTranslation.translate(n)
        case .ios: return IOSTranslation.translate(n, options: iosOptions)
        }
    }

    /// Handles one notification from Home Assistant: over a live websocket channel if the device has one (no quota
    /// used), else by the app's cloud route. Throws `APIError` for every non-2xx answer.
    ///
    /// An accepted notification also binds its push token to its webhook id for the websocket channel
    /// (`LocalPushBindingRegistry`): only Home Assistant's accepted posts move a binding.
    public func send(_ n: HANotification, platform: HAPlatform) async throws(APIError) -> Reply {
        let reply: Reply
        if let hub, let id = await hub.deliver(n, platform: platform) {
            reply = try await localReply(n, messageID: "local:\(id)")
        } else {
            reply = try await sendViaCloud(n, platform: platform)
        }
        await hub?.observe(n)
        return reply
    }

    /// The app's cloud route (what an unconfirmed channel message falls back to). Local-only apps queue instead.
    public func sendViaCloud(_ n: HANotification, platform: HAPlatform) async throws(APIError) -> Reply {
        let token = n.pushToken
        let appID = n.registrationInfo.appID
        if registry.routes.provider(for: appID) == AppRoutes.localOnly {
            guard let hub else {
                throw APIError.configuration("App '\(appID ?? "")' is local-only but the websocket channel is not running.")
            }
            do {
                let id = try await hub.queue(n, platform: platform)
                return try await localReply(n, messageID: "queued:\(id)")
            } catch let error as APIError {
                throw error
            } catch {
                throw storageFailure(error)
            }
        }
        let translated = try await sealIfRegistered(translate(n, platform: platform), n, platform: platform)
        guard let provider = registry.provider(for: appID) else {
            throw APIError.configuration("No provider is configured for app id '\(appID ?? "(none)")'. Add an entry to 'apps' in the PushRelay config.",
                                         fields: ["target": .string(token)])
        }
        let now = clock.now()
        let day = UTCDay(now)
        let delivery = Delivery(platform: platform, pushToken: token, appID: appID, notification: translated)

        if policy.isExempt(translated) {
            let dead: DeadToken?
            do {
                dead = try await store.deadToken(token, now: now)
            } catch {
                throw storageFailure(error)
            }
            if let dead {
                let limits = try await rateLimits(pushToken: token, appID: appID, day: day)
                throw APIError.deadToken(dead, token: token, rateLimits: limits)
            }
            let result = await deliver(delivery, via: provider, reservation: nil, counted: false)
            return try reply(result, token: token, rateLimits: try await rateLimits(pushToken: token, appID: appID, day: day))
        }

        // A provider without I/O (the sandbox) answers before the quota is checked: its delivery is the log row, which
        // then commits with the reservation (one transaction per request) and only if a slot was reserved.
        var local: DeliveryResult?
        if provider.isLocal {
            let outcome = await run(delivery, via: provider)
            if case .success = outcome { local = outcomeRecord(delivery, via: provider, outcome: outcome, counted: true) }
        }
        let reservation: QuotaReservation
        do {
            switch try await store.reserveUnlessDead(pushToken: token, appID: appID, webhookID: n.registrationInfo.webhookID, day: day, policy: policy,
                                                     now: now, delivered: local?.record) {
            case .reserved(let r): reservation = r
            case .dead(let dead, let limits): throw APIError.deadToken(dead, token: token, rateLimits: limits)
            }
        } catch let error as APIError {
            throw error
        } catch {
            throw storageFailure(error)
        }
        guard reservation.decision.allowed else {
            if reservation.decision.sendNotice {
                await sendRateLimitNotice(platform: platform, token: token, appID: appID, provider: provider, reservation: reservation)
            }
            logger.debug("rate limited", metadata: ["token": .string(TokenDisplay.short(token)), "maximum": .stringConvertible(reservation.maximum)])
            throw APIError(.tooManyRequests, "RateLimited",
                           "The given target has reached the maximum number of notifications allowed per day (\(reservation.maximum)). Notifications resume after midnight UTC (\(reservation.rateLimits.resetsAt)).",
                           fields: ["target": .string(token), "rateLimits": reservation.rateLimits.json])
        }
        if var local {
            local.counters = reservation.decision.counters
            return try reply(local, token: token, rateLimits: reservation.rateLimits)
        }
        let result = await deliver(delivery, via: provider, reservation: reservation, counted: true)
        var limits = reservation.rateLimits
        if case .failure = result.outcome, let counters = result.counters {
            limits = RateLimits(counters: counters, maximum: reservation.maximum, day: reservation.day)
        }
        return try reply(result, token: token, rateLimits: limits)
    }

    /// 201 for a notification delivered (or queued) locally: the event as `sentPayload`, the untouched cloud quota.
    private func localReply(_ n: HANotification, messageID: String) async throws(APIError) -> Reply {
        let limits: RateLimits
        do {
            limits = try await store.rateLimits(pushToken: n.pushToken, appID: n.registrationInfo.appID,
                                                day: UTCDay(clock.now()), policy: policy)
        } catch {
            throw storageFailure(error)
        }
        let body: JSONValue = [
            "messageId": .string(messageID), "sentPayload": LocalPushWire.notificationEvent(n, confirmID: nil),
            "target": .string(n.pushToken), "rateLimits": limits.json,
        ]
        return Reply(status: 201, body: JSONWriter.bytes(body))
    }

    /// Read-only quota for `checkRateLimits`.
    public func rateLimits(pushToken: String) async throws(APIError) -> RateLimits {
        try await rateLimits(pushToken: pushToken, appID: nil, day: UTCDay(clock.now()))
    }

    private func rateLimits(pushToken: String, appID: String?, day: UTCDay) async throws(APIError) -> RateLimits {
        do {
            return try await store.rateLimits(pushToken: pushToken, appID: appID, day: day, policy: policy)
        } catch {
            throw storageFailure(error)
        }
    }

    struct DeliveryResult {
        var outcome: Result<DeliveryReceipt, DeliveryFailure>
        /// The receipt's `sentPayload`, encoded once for both the response and the delivery log.
        var payloadJSON: [UInt8]
        /// The delivery log row.
        var record: DeliveryRecord
        /// Counters after recording a failure of a counted delivery.
        var counters: UsageCounters?
    }

    private func run(_ delivery: Delivery, via provider: any PushProvider) async -> Result<DeliveryReceipt, DeliveryFailure> {
        guard let runner = runners[provider.name] else {
            return .failure(.configuration(message: "provider '\(provider.name)' has no delivery runner"))
        }
        return await runner.run(delivery)
    }

    /// The outcome with its encoded payload and its delivery log row.
    private func outcomeRecord(_ delivery: Delivery, via provider: any PushProvider, outcome: Result<DeliveryReceipt, DeliveryFailure>,
                               counted: Bool) -> DeliveryResult {
        let payloadJSON = (try? outcome.get()).map { JSONWriter.bytes($0.sentPayload) } ?? []
        let record = DeliveryRecord(
            at: clock.now(), pushToken: delivery.pushToken, appID: delivery.appID, platform: delivery.platform.rawValue,
            provider: provider.name, kind: delivery.kind.rawValue, counted: counted,
            outcome: outcome.outcomeName, messageID: try? outcome.get().messageID,
            errorMessage: outcome.failureMessage,
            payload: provider.recordsPayload && !payloadJSON.isEmpty ? String(decoding: payloadJSON, as: UTF8.self) : nil)
        return DeliveryResult(outcome: outcome, payloadJSON: payloadJSON, record: record)
    }

    private func deliver(_ delivery: Delivery, via provider: any PushProvider, reservation: QuotaReservation?, counted: Bool) async -> DeliveryResult {
        let outcome = await run(delivery, via: provider)
        var dead: DeadMark?
        if case .failure(.invalidToken(let reason, let message)) = outcome {
            let now = clock.now()
            dead = DeadMark(provider: provider.name, reason: reason, message: message,
                            until: now.addingTimeInterval(TimeInterval(settings.deadTokenTTLms) / 1000))
        }
        var result = outcomeRecord(delivery, via: provider, outcome: outcome, counted: counted)
        let record = result.record
        var counters: UsageCounters?
        if case .success = outcome {
            // The reservation already counted this delivery; only the log row remains, committed with the next batch.
            let logger = self.logger
            store.recordDelivered(record, day: reservation?.day ?? UTCDay(record.at)) { error in
                logger.error("could not write the delivery log", metadata: ["error": .string("\(error)")])
            }
            counters = reservation?.decision.counters
        } else {
            do {
                counters = try await store.complete(reservation, record: record, markDead: dead)
            } catch {
                // The failure is final already; a ledger write failure must not turn it into a retry.
                logger.error("could not record delivery outcome", metadata: ["token": .string(TokenDisplay.short(delivery.pushToken)), "error": .string("\(error)")])
            }
        }
        if case .failure(let f) = outcome {
            logger.warning("delivery failed", metadata: [
                "token": .string(TokenDisplay.short(delivery.pushToken)), "provider": .string(provider.name),
                "outcome": .string(outcome.outcomeName), "reason": .string(f.message),
            ])
        }
        result.counters = counters
        return result
    }

    private func sendRateLimitNotice(platform: HAPlatform, token: String, appID: String?, provider: any PushProvider, reservation: QuotaReservation) async {
        let notice = RateLimitNotice.translate(platform: platform, pushToken: token, maximum: reservation.maximum, resetsAt: reservation.rateLimits.resetsAt)
        let delivery = Delivery(platform: platform, pushToken: token, appID: appID, notification: notice, kind: .rateLimitNotice)
        _ = await deliver(delivery, via: provider, reservation: nil, counted: false)
        logger.info("sent rate-limit notice", metadata: ["token": .string(TokenDisplay.short(token)), "maximum": .stringConvertible(reservation.maximum)])
    }

    private func reply(_ result: DeliveryResult, token: String, rateLimits: RateLimits) throws(APIError) -> Reply {
        switch result.outcome {
        case .success(let receipt):
            // {"messageId", "rateLimits", "sentPayload", "target"} with the payload spliced in as encoded.
            var out: [UInt8] = []
            out.reserveCapacity(result.payloadJSON.count + 320)
            out.append(contentsOf: #"{"messageId":"#.utf8)
            JSONWriter.write(.string(receipt.messageID), into: &out)
            out.append(contentsOf: #","rateLimits":"#.utf8)
            rateLimits.writeJSON(into: &out)
            out.append(contentsOf: #","sentPayload":"#.utf8)
            out.append(contentsOf: result.payloadJSON)
            out.append(contentsOf: #","target":"#.utf8)
            JSONWriter.write(.string(token), into: &out)
            out.append(UInt8(ascii: "}"))
            return Reply(status: 201, body: out)
        case .failure(let failure):
            throw APIError.delivery(failure, token: token, rateLimits: rateLimits)
        }
    }

    private func storageFailure(_ error: any Error) -> APIError {
        logger.error("quota storage failed", metadata: ["error": .string("\(error)")])
        return APIError(.serviceUnavailable, "StorageUnavailable",
                        "PushRelay could not read or update its quota database, so the notification was not sent. Try again shortly; the server log has details.",
                        headers: [.retryAfter: "5"])
    }
}

extension APIError {
    /// A token remembered as dead: answered 410 without calling the provider.
    static func deadToken(_ dead: DeadToken, token: String, rateLimits: RateLimits) -> APIError {
        APIError(.gone, "InvalidToken",
                 "The push token is no longer valid: \(dead.provider) reported \(dead.reason) at \(dead.markedAt). Open the companion app on the device so it registers a new token with Home Assistant.",
                 fields: ["target": .string(token), "rateLimits": rateLimits.json, "errorCode": .string(dead.reason)])
    }

    /// Maps a provider failure to what Home Assistant is told.
    static func delivery(_ failure: DeliveryFailure, token: String, rateLimits: RateLimits) -> APIError {
        var fields: [String: JSONValue] = ["target": .string(token), "rateLimits": rateLimits.json]
        switch failure {
        case .invalidToken(let reason, let message):
            fields["errorCode"] = .string(reason)
            return APIError(.gone, "InvalidToken",
                            "The push token is no longer valid (\(message)). Open the companion app on the device so it registers a new token with Home Assistant.",
                            fields: fields)
        case .payloadTooLarge(let message):
            return APIError(.contentTooLarge, "PayloadTooLarge", message, fields: fields)
        case .invalidPayload(let reason, let message):
            fields["errorCode"] = .string(reason)
            return APIError(.badRequest, "InvalidPayload", message, fields: fields)
        case .invalidTarget(let reason, let message):
            return .invalidTarget(reason: reason, message: message, fields: fields)
        case .transient(let reason, let message, let retryAfter):
            fields["errorCode"] = .string(reason)
            let seconds = retryAfter ?? 30
            return APIError(.serviceUnavailable, "ProviderUnavailable", message, fields: fields, headers: [.retryAfter: String(seconds)])
        case .configuration(let message):
            return .configuration(message, fields: fields)
        }
    }
}

extension Result where Success == DeliveryReceipt, Failure == DeliveryFailure {
    var outcomeName: String {
        switch self {
        case .success: return "delivered"
        case .failure(.invalidToken): return "invalid_token"
        case .failure(.payloadTooLarge): return "payload_too_large"
        case .failure(.invalidPayload): return "invalid_payload"
        case .failure(.invalidTarget): return "invalid_target"
        case .failure(.transient): return "transient"
        case .failure(.configuration): return "configuration"
        }
    }

    var failureMessage: String? {
        if case .failure(let f) = self { return f.message }
        return nil
    }
}

extension RateLimits {
    /// The `rateLimits` object's fields, keys in the sorted order JSONWriter writes them.
    private var fields: [(key: String, value: JSONValue)] {
        [
            ("attempts", .int(Int64(attempts))), ("errors", .int(Int64(errors))), ("maximum", .int(Int64(maximum))),
            ("remaining", .int(Int64(remaining))), ("resetsAt", .string(resetsAt)), ("successful", .int(Int64(successful))),
            ("total", .int(Int64(total))),
        ]
    }

    /// `json` as JSONWriter writes it, without building and sorting a dictionary: every 201 carries one.
    func writeJSON(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (i, (key, value)) in fields.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.write(.string(key), into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.write(value, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    var json: JSONValue {
        .object(Dictionary(uniqueKeysWithValues: fields))
    }
}
