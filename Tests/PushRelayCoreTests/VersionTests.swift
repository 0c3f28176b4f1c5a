import Testing
@testable import PushRelayCore
@Test func v() { #expect(!PushRelayVersion.string.isEmpty) }
