import PushRelayConfiguration
import PushRelayCore
import Testing

/// `relay.unsubscribe_allowed_private_networks` becomes the address policy an `Unsubscribe-URL` is checked against.
@Suite struct UnsubscribeNetworksConfigTests {
    @Test func theUnsubscribeSettingIsACIDRList() throws {
        #expect(PushRelayConfig().relay.unsubscribeAddressPolicy.allowedNetworks.isEmpty)
        let c = try PushRelayConfig(tree: ["relay": ["unsubscribe_allowed_private_networks": ["192.168.0.0/16"]]])
        let inside = try #require(OutboundAddressPolicy.Address("192.168.4.4"))
        #expect(c.relay.unsubscribeAddressPolicy.check(inside) == .allowed)
        #expect(throws: ConfigError.self) { try PushRelayConfig(tree: ["relay": ["unsubscribe_allowed_private_networks": ["192.168.0.0/40"]]]) }
    }
}
