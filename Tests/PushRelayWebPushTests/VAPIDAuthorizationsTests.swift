import Crypto
import Foundation
import PushRelayCore
import PushRelayWebPush
import Testing

/// VAPID headers are signed once per audience and reused within their lifetime, in a bounded cache, on the caller's
/// clock.
@Suite struct VAPIDAuthorizationsTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let signer = VAPIDSigner(key: P256.Signing.PrivateKey(), contact: "ops@example.org", lifetimeSeconds: 12 * 3600)

    /// The JWT's `exp` claim in a `vapid t=…, k=…` header.
    func expiry(_ header: String) throws -> Int64 {
        let jwt = try #require(header.split(separator: " ").dropFirst().first?.dropFirst(2).dropLast())
        let claims = try #require(Base64URL.decode(String(jwt.split(separator: ".")[1])))
        guard case .object(let o) = try JSONParser.parse(claims), case .int(let exp)? = o["exp"] else { throw ParseFailure() }
        return exp
    }

    struct ParseFailure: Error {}

    @Test func aHeaderIsReusedUntilItsRefreshMarginThenSignedAgain() throws {
        let cache = VAPIDAuthorizations(signer: signer, refreshMargin: 3600)
        let first = cache.header(audience: "https://push.example.net", now: start)
        #expect(try expiry(first) == Int64(start.timeIntervalSince1970) + 12 * 3600)
        #expect(first.hasSuffix(", k=\(signer.applicationServerKey)"))
        // ECDSA signatures are randomised, so the same string means the same signature: reused.
        #expect(cache.header(audience: "https://push.example.net", now: start.addingTimeInterval(60)) == first)
        #expect(cache.header(audience: "https://push.example.net", now: start.addingTimeInterval(11 * 3600 - 1)) == first)
        // Within the last hour of its lifetime it is signed again, for a full lifetime from then.
        let later = start.addingTimeInterval(11 * 3600)
        let second = cache.header(audience: "https://push.example.net", now: later)
        #expect(second != first)
        #expect(try expiry(second) == Int64(later.timeIntervalSince1970) + 12 * 3600)
        #expect(cache.header(audience: "https://push.example.net", now: later.addingTimeInterval(1)) == second)
    }

    @Test func eachAudienceHasItsOwnToken() throws {
        let cache = VAPIDAuthorizations(signer: signer)
        let a = cache.header(audience: "https://a.example.net", now: start)
        let b = cache.header(audience: "https://b.example.net", now: start)
        #expect(a != b)
        #expect(cache.header(audience: "https://a.example.net", now: start) == a)
        #expect(cache.count == 2)
    }

    @Test func theCacheIsBoundedAndEvictsWhatIsDueFirst() throws {
        let cache = VAPIDAuthorizations(signer: signer, refreshMargin: 3600, capacity: 2)
        let a = cache.header(audience: "https://a.example.net", now: start)
        _ = cache.header(audience: "https://b.example.net", now: start.addingTimeInterval(10))
        // Full: the new audience evicts the one that expires first (a).
        _ = cache.header(audience: "https://c.example.net", now: start.addingTimeInterval(20))
        #expect(cache.count == 2)
        #expect(cache.header(audience: "https://a.example.net", now: start.addingTimeInterval(30)) != a)
        #expect(cache.count == 2)
        // Past every entry's refresh point, a new audience drops all of them that are due.
        _ = cache.header(audience: "https://d.example.net", now: start.addingTimeInterval(12 * 3600))
        #expect(cache.count == 1)
    }

    @Test func theRefreshMarginIsAtMostHalfTheLifetime() {
        let short = VAPIDSigner(key: P256.Signing.PrivateKey(), contact: "ops@example.org", lifetimeSeconds: 600)
        #expect(VAPIDAuthorizations(signer: short, refreshMargin: 3600).refreshMargin == 300)
        #expect(VAPIDAuthorizations(signer: short, capacity: 0).capacity == 1)
    }
}
