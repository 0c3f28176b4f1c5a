import PushRelayCore
import PushRelayStore

/// One delivery as every entry point hands it to the `Dispatcher`: what to send, through which provider, and how it
/// counts against the daily quota.
package struct Dispatch: Sendable {
    /// How a dispatch counts against the daily quota.
    package enum Quota: Sendable {
        /// A slot is reserved before the provider is called (refused when the limit is reached), and a failed delivery
        /// turns its slot into an error. A token remembered as dead is refused without counting. `webhookID` is kept
        /// with the day's usage row (Home Assistant's accepted posts bind it to the push token).
        case counted(QuotaPolicy, webhookID: String? = nil)
        /// Nothing is counted. With `checkDead`, a token remembered as dead is refused before the provider is called.
        case uncounted(checkDead: Bool)
    }

    /// What the provider gets.
    package var delivery: Delivery
    /// The provider instance (`providers.<name>`).
    package var provider: String
    /// The key the quota, the dead-token memory and the delivery log know this target by: the push token, or for a
    /// Matrix device `matrix:<pushkey>`.
    package var account: String
    /// The delivery log's `platform` column.
    package var logPlatform: DeliveryPlatform
    package var quota: Quota
    /// The address of the client the dispatch is made for (the request's, as the entry point was given it): past the
    /// provider's in-flight bound it waits in that client's line (`ProviderGate`). nil: work no request is waiting for
    /// (a retry, a fallback), in one shared line.
    package var client: String?

    package init(
        _ delivery: Delivery,
        provider: String,
        account: String? = nil,
        logPlatform: DeliveryPlatform? = nil,
        quota: Quota,
        client: String?
    ) {
        self.delivery = delivery
        self.provider = provider
        self.account = account ?? delivery.pushToken
        self.logPlatform = logPlatform ?? DeliveryPlatform(delivery.platform)
        self.quota = quota
        self.client = client
    }
}

/// How a dispatch ended. Entry points turn it into their own wire answer.
package enum DispatchOutcome: Sendable {
    /// The provider took it. `rateLimits` after counting, for a counted dispatch.
    case delivered(DeliveryReceipt, rateLimits: RateLimits?)
    /// The daily limit is reached: nothing was sent. `reservation.decision.sendNotice` is true for the one refusal per
    /// token and day that should be told so.
    case refused(QuotaReservation)
    /// The token is remembered as dead: nothing was sent or counted. `rateLimits` for a counted dispatch.
    case dead(DeadToken, rateLimits: RateLimits?)
    /// The provider did not take it (the failure is already logged and recorded; an invalid token is remembered as dead).
    case failed(DeliveryFailure, rateLimits: RateLimits?)
    /// The quota could not be read or written: nothing was sent.
    case storageUnavailable
    /// The quota reservation did not commit within its share of the delivery deadline (the storage is stalled, not the
    /// provider): nothing was sent, and a reservation that commits later holds no slot.
    case storageBusy
}
