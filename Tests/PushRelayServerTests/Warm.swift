import Testing
import HummingbirdTesting
import AsyncHTTPClient
@testable import PushRelayServer
@Test func w() { #expect(true) }
