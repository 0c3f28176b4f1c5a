import Crypto
import Foundation
import PushRelayAdmin
import PushRelayCore
import PushRelayEventLoopClock
import PushRelaySQLite
import PushRelaySecurity
import PushRelayServerTestRig
import PushRelayStore
import Testing

@testable import PushRelayServer

/// Credentials are never compared byte by byte with an early exit: the admin token goes through `SecretMatcher`
/// (SHA-256, then a comparison that reads every byte), channel tokens and API keys are looked up by their SHA-256 and
/// never stored in clear. Guessing any of them is limited per address (`CredentialCheckTests` covers the admin
/// token, API keys and the shared budget; the channel-token cases are here). No timing is asserted: the tests pin the
/// code path.
@Suite struct ConstantTimeCredentialTests {
    static let secret = "constant-time-admin-token-0123456789"

    @Test func theComparisonReadsEveryByteAndIgnoresWhereTheyDiffer() {
        let base = [UInt8](repeating: 0x41, count: 32)
        var first = base
        first[0] ^= 1
        var last = base
        last[31] ^= 1
        #expect(SecretMatcher.constantTimeEquals(base, base))
        #expect(!SecretMatcher.constantTimeEquals(base, first), "a difference in the first byte")
        #expect(!SecretMatcher.constantTimeEquals(base, last), "a difference in the last byte")
        #expect(!SecretMatcher.constantTimeEquals(base, Array(base.prefix(31))), "a prefix is not equal")
        #expect(!SecretMatcher.constantTimeEquals(base, base + [0]), "nor is a longer input padded with zero")
        #expect(!SecretMatcher.constantTimeEquals([], [0]))
        #expect(SecretMatcher.constantTimeEquals([], []))
        // Lengths that differ only by a multiple of 256 are still told apart.
        #expect(!SecretMatcher.constantTimeEquals([UInt8](repeating: 0, count: 256), []))
    }

    @Test func theAdminTokenIsMatchedThroughItsDigest() {
        let matcher = SecretMatcher(secret: Self.secret)
        #expect(matcher.matches(Self.secret))
        var chars = Array(Self.secret)
        chars[0] = "C"
        #expect(!matcher.matches(String(chars)), "same length, first character differs")
        chars = Array(Self.secret)
        chars[chars.count - 1] = "X"
        #expect(!matcher.matches(String(chars)), "same length, last character differs")
        #expect(!matcher.matches(Self.secret.dropLast()))
        #expect(!matcher.matches(""))
        // AdminAuth keeps only the digest: nothing in it is the token, so nothing can compare against it directly.
        let auth = AdminAuth(token: Self.secret, limiter: FailedAuthLimiter(limit: 3), clock: EventLoopClock())
        #expect(!String(reflecting: auth).contains(Self.secret))
        #expect(!"\(Mirror(reflecting: auth.matcher).children.map { "\($0.value)" })".contains(Self.secret))
    }

    @Test func channelTokensAndAPIKeysAreStoredAndLookedUpByDigestOnly() async throws {
        try await TestServer.with { s in
            let (token, _) = try await SQLitePushChannelStore(database: s.database).createToken(webhookID: "hook-ct", label: "x")
            let key = try await SQLiteDeviceStore(database: s.database).createAPIKey(label: "ct").key
            let hex = { (v: String) in SHA256.hash(data: Data(v.utf8)).map { String(format: "%02x", $0) }.joined() }
            // The database's files hold each one's digest, and neither in clear.
            let file = try Data(contentsOf: URL(fileURLWithPath: s.dbPath))
            let wal = (try? Data(contentsOf: URL(fileURLWithPath: s.dbPath + "-wal"))) ?? Data()
            for secret in [token, key] {
                let digest = Data(hex(secret).utf8)
                #expect(file.range(of: digest) != nil || wal.range(of: digest) != nil, "the digest is stored")
                #expect(file.range(of: Data(secret.utf8)) == nil && wal.range(of: Data(secret.utf8)) == nil)
            }
            #expect(try await SQLitePushChannelStore(database: s.database).webhookID(forChannelToken: token) == "hook-ct")
            #expect(try await SQLiteDeviceStore(database: s.database).apiKeyID(forKey: key) != nil)
        }
    }

    @Test func guessingChannelTokensIsLimitedAndABlockedAddressIsRefusedEvenTheRightOne() async throws {
        try await TestServer.with(yaml: "security:\n  max_failed_auths_per_minute: 3\n") { s in
            let (token, _) = try await SQLitePushChannelStore(database: s.database).createToken(webhookID: "hook-guess", label: nil)
            var guess = Array(token)
            guess[guess.count - 1] = guess.last == "A" ? "B" : "A"
            for _ in 0..<3 {
                let ws = WSTestClient.connect(port: s.port)
                _ = try await ws.receive()
                ws.send(["type": "auth", "access_token": .string(String(guess))])
                #expect(try await ws.receive()["type"] == "auth_invalid")
            }
            let right = WSTestClient.connect(port: s.port)
            _ = try await right.receive()
            right.send(["type": "auth", "access_token": .string(token)])
            let refused = try await right.receive()
            #expect(refused["type"] == "auth_invalid")
            #expect(refused["message"]?.stringValue?.contains("Too many failed") == true, "\(refused)")
        }
    }
}
