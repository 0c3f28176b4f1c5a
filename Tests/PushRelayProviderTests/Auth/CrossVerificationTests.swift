import Crypto
import Foundation
import JWTKit
import PushRelayCore
import PushRelayTestSupport
import Testing

@testable import PushRelayProviders

/// The provider signs its JWTs by hand; an independent JWT library must accept them.
///
/// Wall clock: an independent JWT library in a Python process checks each token, on real time.
@Suite struct CrossVerificationTests {
    struct APNsClaims: JWTPayload {
        var iss: String
        var iat: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    struct GoogleClaims: JWTPayload {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    @Test func jwtKitVerifiesTheAPNsProviderToken() async throws {
        try await withAPNs { fake, provider, clock in
            _ = try await provider.send(apnsDelivery(token: deviceToken(1)))
            let token = try #require(fake.records.first?.providerToken)
            let keys = JWTKeyCollection()
            await keys.add(
                ecdsa: try ES256PublicKey(pem: Shared.apnsKey.publicKey.pemRepresentation),
                kid: JWKIdentifier(string: Shared.apnsKey.keyID)
            )
            let claims = try await keys.verify(token, as: APNsClaims.self)
            #expect(claims.iss == Shared.apnsKey.teamID)
            #expect(claims.iat == Int(clock.now().timeIntervalSince1970))
        }
    }

    @Test func jwtKitVerifiesTheGoogleAssertion() async throws {
        let account = try ServiceAccount.parse(Shared.account.json(tokenURI: "https://oauth2.example/token"), key: "service_account_json")
        let now = Date(timeIntervalSince1970: 1_800_000_000.9)
        let assertion = try GoogleOAuthAssertion.make(for: account, now: now)
        let keys = JWTKeyCollection()
        await keys.add(
            rsa: try Insecure.RSA.PublicKey(pem: Shared.account.publicKey.pemRepresentation),
            digestAlgorithm: .sha256,
            kid: JWKIdentifier(string: Shared.account.privateKeyID)
        )
        let claims = try await keys.verify(assertion, as: GoogleClaims.self)
        #expect(claims.iss == Shared.account.clientEmail)
        #expect(claims.aud == "https://oauth2.example/token")
        #expect(claims.scope == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(claims.iat == 1_800_000_000)
        #expect(claims.exp == 1_800_003_600)
        let jwt = try #require(InspectedJWT(assertion))
        #expect(jwt.header == ["alg": "RS256", "typ": "JWT", "kid": .string(Shared.account.privateKeyID)])
        #expect(jwt.claimsText.contains(#""iat":1800000000,"#), "iat/exp must be written as whole seconds")
    }

    @Test func theOAuthFormBodyIsFormEncoded() {
        #expect(
            GoogleOAuthAssertion.formBody(assertion: "a.b-c_d")
                == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=a.b-c_d"
        )
    }
}
