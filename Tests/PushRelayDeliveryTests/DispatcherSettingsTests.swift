import PushRelayConfiguration
import PushRelayCore
import PushRelayDelivery
import Testing

@testable import PushRelayServer

/// The dispatcher's settings are `delivery:`'s, as the application makes them.
@Suite struct DispatcherSettingsTests {
    @Test func theyAreTheDeliverySectionsSettings() {
        var delivery = DeliverySettings()
        delivery.deadlineMs = 6000
        delivery.deadTokenTTLms = 90_000
        delivery.maxInFlight = 12
        delivery.maxWaitMs = 2500
        delivery.retryBaseMs = 50
        delivery.maxAttempts = 3
        let settings = DispatcherSettings(delivery)
        #expect(settings.deadlineMs == 6000)
        #expect(settings.deadTokenTTL == 90)
        #expect(settings.maxInFlight == 12)
        #expect(settings.maxWait == .milliseconds(2500))
        #expect(settings.retry == delivery.retryPolicy && settings.retry.maxAttempts == 3)
        #expect(settings.breaker == delivery.breaker && settings.breaker != nil)
    }

    @Test func noCoolDownIsNoBreaker() {
        var delivery = DeliverySettings()
        delivery.breakerCoolDownMs = 0
        #expect(DispatcherSettings(delivery).breaker == nil)
    }
}
