import Foundation
import PushRelayCore
import Testing

@Suite struct RelayTargetTests {
    static let token = String(repeating: "ab12", count: 16)

    @Test func pathsAreParsed() throws {
        #expect(
            try RelayTarget.parse(path: "/relay-to/production/\(Self.token)").get()
                == RelayTarget(destination: .apns(production: true), token: Self.token)
        )
        #expect(
            try RelayTarget.parse(path: "/relay-to/development/\(Self.token)/a/b").get()
                == RelayTarget(destination: .apns(production: false), token: Self.token, extra: "a/b")
        )
        #expect(try RelayTarget.parse(path: "/relay-to/fcm/abc:def/x").get() == RelayTarget(destination: .fcm, token: "abc:def", extra: "x"))
        #expect(try RelayTarget.parse(path: "/relay-to/production/\(Self.token)/").get().extra == nil)
    }

    @Test func badPathsAreRefused() {
        for path in ["/relay-to/production", "/relay-to/staging/\(Self.token)", "/relay-to/production/nothex", "/relay-to/fcm/"] {
            if case .success = RelayTarget.parse(path: path) { Issue.record("accepted \(path)") }
        }
    }

    @Test func unsubscribeOnlyToListedHosts() {
        #expect(UnsubscribePolicy.allows("https://mastodon.example/api/unsub", allowedHosts: []) == false)
        #expect(UnsubscribePolicy.allows("https://mastodon.example/api/unsub", allowedHosts: ["Mastodon.Example"]))
        #expect(UnsubscribePolicy.allows("https://evil.example/x", allowedHosts: ["mastodon.example"]) == false)
        #expect(UnsubscribePolicy.allows("file:///etc/passwd", allowedHosts: ["mastodon.example"]) == false)
        #expect(UnsubscribePolicy.allows("https://u:p@mastodon.example/", allowedHosts: ["mastodon.example"]) == false)
    }
}
