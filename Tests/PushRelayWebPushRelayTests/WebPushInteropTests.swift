import Foundation
import PushRelayCore
import PushRelaySQLite
import PushRelayServer
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

/// Independent implementations (Python `pywebpush`, `http_ece`, `cryptography`, `zlib`, and a Python extended-Z85
/// decoder written from the reference) send to and decode what PushRelay produces. `.ci/run` installs the packages;
/// without them these tests FAIL, saying what to install.
@Suite struct WebPushInteropTests {
    static let script = #"""
        import base64, json, os, sys, zlib

        ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

        def b64u(b):
            return base64.urlsafe_b64encode(b).rstrip(b"=").decode()

        def unb64u(s):
            return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))

        def z85_decode(text):
            digits = [ALPHABET.index(c) for c in text if c in ALPHABET]
            out = bytearray()
            full = len(digits) - len(digits) % 5
            for i in range(0, full, 5):
                v = 0
                for d in digits[i:i + 5]:
                    v = v * 85 + d
                out += v.to_bytes(4, "big")
            rest = digits[full:]
            if len(rest) >= 2:
                v = 0
                for d in rest:
                    v = v * 85 + d
                n = len(rest) - 1
                out += (v & ((1 << (8 * n)) - 1)).to_bytes(n, "big")
            return bytes(out)

        mode = sys.argv[1]
        if mode == "send":
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            from pywebpush import webpush
            endpoint, encoding, text = sys.argv[2], sys.argv[3], sys.argv[4]
            receiver = ec.generate_private_key(ec.SECP256R1())
            public = receiver.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
            auth = os.urandom(16)
            response = webpush({"endpoint": endpoint, "keys": {"p256dh": b64u(public), "auth": b64u(auth)}},
                               data=text, content_encoding=encoding, ttl=120, headers={"Topic": "interop"})
            print(json.dumps({"status": response.status_code, "location": response.headers.get("Location"),
                              "private": str(receiver.private_numbers().private_value), "auth": b64u(auth)}))
        elif mode == "decrypt":
            import http_ece
            from cryptography.hazmat.primitives.asymmetric import ec
            fields, private, auth, encoding = json.loads(sys.argv[2]), int(sys.argv[3]), unb64u(sys.argv[4]), sys.argv[5]
            key = ec.derive_private_key(private, ec.SECP256R1())
            body = z85_decode(fields["p"])
            if encoding == "aesgcm":
                plain = http_ece.decrypt(body, salt=z85_decode(fields["s"]), dh=z85_decode(fields["k"]), private_key=key,
                                         auth_secret=auth, version="aesgcm")
            else:
                plain = http_ece.decrypt(body, private_key=key, auth_secret=auth, version="aes128gcm")
            sys.stdout.write(plain.decode())
        elif mode == "invite":
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
            fields, key = json.loads(sys.argv[2]), base64.b64decode(sys.argv[3])
            name = sys.argv[4] if len(sys.argv) > 4 else "invite"
            ciphertext = base64.b64decode(fields[name]) + base64.b64decode(fields["tag"])
            compressed = AESGCM(key).decrypt(base64.b64decode(fields["iv"]), ciphertext, None)
            sys.stdout.write(zlib.decompress(compressed).decode())
        """#

    /// Runs the script without blocking a cooperative thread; returns stdout, throws on a non-zero exit.
    static func python(_ args: [String]) async throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pushrelay-interop-\(UUID().uuidString).py")
        try script.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try await ProcessSpawn.run(["python3", file.path] + args)
        guard r.status == 0 else { throw PythonFailed(message: "python3 \(args.first ?? "") exited \(r.status): \(r.stderr.suffix(2000))") }
        return r.stdout
    }

    struct PythonFailed: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Fails (not skips) when the independent implementations are missing.
    static func requirePythonPackages() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pushrelay-probe-\(UUID().uuidString).py")
        try "import pywebpush, http_ece, cryptography\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let status = try await ProcessSpawn.run(["python3", file.path]).status
        try #require(
            status == 0,
            "The interop tests need Python 3 with pywebpush, http_ece and cryptography: run `python3 -m pip install pywebpush http_ece cryptography` (.ci/run does)."
        )
    }

    static let token = String(repeating: "feed", count: 16)

    @Test(arguments: ["aes128gcm", "aesgcm"])
    func pywebpushToAPNsDecryptsBack(encoding: String) async throws {
        try await Self.requirePythonPackages()
        try await withRelayFakes { s, env in
            let text = "{\"title\":\"Mastodon\",\"body\":\"interop \(encoding) ✓\"}"
            let sent = try JSONParser.parse(
                Array(try await Self.python(["send", "http://127.0.0.1:\(s.port)/relay-to/production/\(Self.token)/acct", encoding, text]).utf8)
            )
            #expect(sent["status"] == 201, "\(sent)")
            #expect(sent["location"]?.stringValue?.hasPrefix("/relay-to/messages/") == true)
            let rec = try #require(env.apns.records.first)
            #expect(rec.headers["apns-collapse-id"] == "interop")
            let payload = try #require(rec.payload)
            #expect(payload["x"] == "acct")
            #expect((payload["k"] != nil) == (encoding == "aesgcm"))
            let plain = try await Self.python([
                "decrypt", payload.jsonString(), sent["private"]?.stringValue ?? "", sent["auth"]?.stringValue ?? "", encoding,
            ])
            #expect(plain == text)
        }
    }

    @Test func pywebpushToFCMDecryptsBack() async throws {
        try await Self.requirePythonPackages()
        try await withRelayFakes { s, env in
            let text = "fcm interop"
            let sent = try JSONParser.parse(
                Array(try await Self.python(["send", "http://127.0.0.1:\(s.port)/relay-to/fcm/fcm:interop", "aesgcm", text]).utf8)
            )
            #expect(sent["status"] == 201, "\(sent)")
            let data = try #require(env.fcm.records.first?.body?["message"]?["data"])
            let plain = try await Self.python([
                "decrypt", data.jsonString(), sent["private"]?.stringValue ?? "", sent["auth"]?.stringValue ?? "", "aesgcm",
            ])
            #expect(plain == text)
        }
    }

    @Test func pythonOpensACallInvite() async throws {
        try await Self.requirePythonPackages()
        try await withRelayFakes { s, env in
            let apiKey = try await SQLiteDeviceStore(database: s.database).createAPIKey(label: nil).key
            let reg = try await s.bearerPost(
                "/api/v1/devices",
                [
                    "platform": "ios", "app_id": "com.example.phone", "push_token": "x", "voip_token": .string(Self.token),
                ],
                key: apiKey
            )
            #expect(reg.status == 201, "\(reg.rawBody)")
            let invite = String(repeating: "a=candidate:1 1 udp 2122260223 192.0.2.1 54321 typ host\r\n", count: 20)
            let r = try await s.bearerPost(
                "/api/v1/calls",
                [
                    "device_id": reg["device_id"] ?? .null, "caller_name": "Alice", "caller_id": "alice", "with_video": false,
                    "invite": .string(invite),
                ],
                key: apiKey
            )
            #expect(r.status == 201, "\(r.rawBody)")
            let alert = try #require(env.apns.records.first?.payload?["aps"]?["alert"])
            let opened = try await Self.python(["invite", alert.jsonString(), reg["encryption_key"]?.stringValue ?? ""])
            #expect(opened == invite)
        }
    }

    @Test func pythonOpensAnEncryptedHomeAssistantNotification() async throws {
        try await Self.requirePythonPackages()
        try await withRelayFakes(configure: { c in c.apps = [.init(match: "*", provider: "fcm", encryptPayloads: true)] }) { s, env in
            let apiKey = try await SQLiteDeviceStore(database: s.database).createAPIKey(label: nil).key
            let reg = try await s.bearerPost("/api/v1/devices", ["platform": "android", "app_id": "a", "push_token": "fcm:sealed"], key: apiKey)
            #expect(reg.status == 201, "\(reg.rawBody)")
            let r = try await s.android(TestServer.haBody(token: "fcm:sealed", message: "Washer done ✓", title: "Laundry"))
            #expect(r.status == 201, "\(r.rawBody)")
            let data = try #require(env.fcm.records.first?.body?["message"]?["data"])
            let opened = try await Self.python(["invite", data.jsonString(), reg["encryption_key"]?.stringValue ?? "", "encrypted"])
            let json = try JSONParser.parse(Array(opened.utf8))
            #expect(json["message"] == "Washer done ✓")
            #expect(json["title"] == "Laundry")
        }
    }
}
