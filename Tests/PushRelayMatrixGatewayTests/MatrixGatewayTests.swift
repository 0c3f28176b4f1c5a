import Crypto
import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelaySQLite
import PushRelayServer
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import PushRelayWebPush
import Testing

/// The Matrix push gateway through a running server: each kind of device, failures per device, the background
/// retry queue and the de-duplication of repeated events.
///
/// ThreadSanitizer: the de-duplication claims and the retry queue, shared by concurrent notifications and the
/// background retries.
@Suite struct MatrixGatewayTests {
    @Test func fcmDeviceGetsTheDataPayload() async throws {
        try await withMatrix { s, f in
            let r = try await s.notify(message, devices: [device(MatrixFakes.fcmApp, "fcm-token-1")])
            #expect(r.status == 200, "\(r.rawBody)")
            #expect(r.json == ["rejected": []])
            let rec = try #require(f.env.fcm.records.first)
            #expect(rec.status == 200)
            #expect(
                rec.body == [
                    "message": [
                        "token": "fcm-token-1", "android": ["priority": "high"],
                        "data": [
                            "event_id": "$ev1", "room_id": "!room:example.org", "type": "m.room.message", "sender": "@tom:example.org",
                            "sender_display_name": "Major Tom", "room_name": "Mission Control", "content_msgtype": "m.text",
                            "content_body": "Hello from orbit", "unread": "2", "prio": "high",
                        ],
                    ]
                ]
            )
            // Logged like every delivery, under the device's quota key.
            let log = try await s.storage.deliveries.recentDeliveries(pushToken: nil, limit: 5)
            #expect(log.first?.pushToken == "matrix:fcm-token-1")
            #expect(log.first?.platform == .matrix(format: .fcm))
            #expect(log.first?.outcome == .delivered)
        }
    }

    @Test func apnsDeviceGetsLocKeysAtItsHexToken() async throws {
        try await withMatrix { s, f in
            let r = try await s.notify(message, devices: [device(MatrixFakes.apnsApp, MatrixFakes.apnsPushkey)])
            #expect(r.json == ["rejected": []], "\(r.rawBody)")
            let rec = try #require(f.env.apns.records.first)
            #expect(rec.status == 200)
            #expect(rec.path == "/3/device/\(MatrixFakes.apnsHex)")
            #expect(rec.headers["apns-priority"] == "10")
            #expect(
                rec.payload == [
                    "room_id": "!room:example.org", "event_id": "$ev1",
                    "aps": [
                        "alert": [
                            "loc-key": "MSG_FROM_USER_IN_ROOM_WITH_CONTENT", "loc-args": ["Major Tom", "Mission Control", "Hello from orbit"],
                        ], "badge": 2,
                    ],
                ]
            )
        }
    }

    @Test func webPushDeviceGetsAnEncryptedVAPIDSignedMessage() async throws {
        try await withMatrix { s, f in
            let sub = f.web.subscribe()
            var low = message
            low["prio"] = "low"
            let r = try await s.notify(low, devices: [webDevice(sub, data: ["only_last_per_room": true])])
            #expect(r.json == ["rejected": []], "\(r.rawBody)")
            let rec = try #require(f.web.records.first)
            #expect(rec.status == 201, "\(rec.problem ?? "")")
            #expect(rec.headers["content-encoding"] == "aes128gcm")
            #expect(rec.headers["ttl"] == "900")
            #expect(rec.headers["urgency"] == "low")
            #expect(rec.headers["topic"] == MatrixWebPushTranslation.topic(roomID: "!room:example.org"))
            #expect(
                rec.json == [
                    "event_id": "$ev1", "room_id": "!room:example.org", "type": "m.room.message", "sender": "@tom:example.org",
                    "sender_display_name": "Major Tom", "room_name": "Mission Control", "unread": 2,
                    "content": ["msgtype": "m.text", "body": "Hello from orbit"],
                ]
            )
        }
    }

    @Test func devicesFailIndependentlyAndOnlyDeadPushkeysAreRejected() async throws {
        try await withMatrix { s, f in
            let gone = f.web.subscribe()
            let fine = f.web.subscribe()
            f.web.script(gone.id, [.gone])
            f.env.fcm.script("fcm-dead", [.unregistered])
            f.env.fcm.script("fcm-flaky", [.unavailable(retryAfter: nil)])
            let r = try await s.notify(
                message,
                devices: [
                    device(MatrixFakes.fcmApp, "fcm-ok"),
                    device(MatrixFakes.fcmApp, "fcm-dead"),
                    device(MatrixFakes.fcmApp, "fcm-flaky"),
                    webDevice(gone),
                    webDevice(fine),
                    device("org.unknown.app", "nobody-knows"),
                    device("im.glob.ambiguous", "two-globs"),
                    device(MatrixFakes.apnsApp, "not base64 at all!"),
                    webDevice(fine, data: ["endpoint": "https://evil.example.net/push/1"]),
                ]
            )
            #expect(r.status == 200, "\(r.rawBody)")
            #expect(r.json == ["rejected": .array(["fcm-dead", .string(gone.p256dh), "nobody-knows", "two-globs", "not base64 at all!"])])
            // The endpoint outside allowed_endpoints was never contacted (and not rejected: it is a config matter).
            #expect(f.web.records.count == 2)
            #expect(f.web.records.allSatisfy { $0.path.hasPrefix("/push/") })
            // The transient one waits in the durable queue.
            let queued = try await SQLiteMatrixStore(database: s.database).queued()
            #expect(queued.map(\.pushkey) == ["fcm-flaky"])
            #expect(queued.first?.eventID == "$ev1")
            #expect(queued.first?.lastError?.contains("UNAVAILABLE") == true)
        }
    }

    @Test func everyDeviceTransientMeans502AndNothingQueued() async throws {
        try await withMatrix { s, f in
            f.env.fcm.script("a", [.unavailable(retryAfter: 3)])
            f.env.fcm.script("b", [.quotaExceeded(retryAfter: nil)])
            let r = try await s.notify(message, devices: [device(MatrixFakes.fcmApp, "a"), device(MatrixFakes.fcmApp, "b")])
            expectMatrixError(r, status: 502, errcode: "M_UNKNOWN")
            #expect(try await SQLiteMatrixStore(database: s.database).queued().isEmpty)
            // The homeserver's retry is not mistaken for a duplicate.
            let again = try await s.notify(message, devices: [device(MatrixFakes.fcmApp, "a"), device(MatrixFakes.fcmApp, "b")])
            #expect(again.json == ["rejected": []])
            #expect(f.env.fcm.records.filter { $0.status == 200 }.count == 2)
        }
    }

    @Test func theRetryQueueDeliversInTheBackground() async throws {
        try await withMatrix(configure: { c in
            c.matrix.retry.pollIntervalMs = 20
            c.matrix.retry.baseDelayMs = 10
        }) { s, f in
            f.env.fcm.script("flaky", [.unavailable(retryAfter: nil), .internalError])
            let r = try await s.notify(message, devices: [device(MatrixFakes.fcmApp, "ok"), device(MatrixFakes.fcmApp, "flaky")])
            #expect(r.json == ["rejected": []])
            let store = SQLiteMatrixStore(database: s.database)
            try await eventually("the queued device is delivered") {
                s.clock.advance(by: 1)
                return try await store.queued().isEmpty && f.env.fcm.records.filter { $0.token == "flaky" && $0.status == 200 }.count == 1
            }
            #expect(f.env.fcm.records.filter { $0.token == "flaky" }.map(\.status) == [503, 500, 200])
        }
    }

    @Test func theRetryQueueSurvivesARestart() async throws {
        let db = TestServer.tempPath()
        try await withMatrix(dbPath: db) { s, f in
            f.env.fcm.script("flaky", [.unavailable(retryAfter: nil)])
            let r = try await s.notify(message, devices: [device(MatrixFakes.fcmApp, "ok"), device(MatrixFakes.fcmApp, "flaky")])
            #expect(r.json == ["rejected": []])
            #expect(try await SQLiteMatrixStore(database: s.database).queued().count == 1)
        }
        // A new process on the same database (and new fakes) picks the item up.
        try await withMatrix(
            dbPath: db,
            configure: { c in
                c.matrix.retry.pollIntervalMs = 20
                c.matrix.retry.baseDelayMs = 10
            }
        ) { s, f in
            try await eventually("the item queued by the previous process is delivered") {
                s.clock.advance(by: 1)
                return f.env.fcm.records.contains { $0.token == "flaky" && $0.status == 200 }
            }
            try await eventually("the queue is empty") { try await SQLiteMatrixStore(database: s.database).queued().isEmpty }
            let body = try #require(f.env.fcm.records.first { $0.token == "flaky" }?.body)
            #expect(body["message"]?["data"]?["event_id"] == "$ev1")
        }
    }

    @Test func aPushkeyFoundDeadInTheBackgroundIsRejectedNextTime() async throws {
        try await withMatrix(configure: { c in
            c.matrix.retry.pollIntervalMs = 20
            c.matrix.retry.baseDelayMs = 10
        }) { s, f in
            f.env.fcm.script("doomed", [.unavailable(retryAfter: nil), .unregistered])
            _ = try await s.notify(message, devices: [device(MatrixFakes.fcmApp, "ok"), device(MatrixFakes.fcmApp, "doomed")])
            try await eventually("the retry hears UNREGISTERED") {
                s.clock.advance(by: 1)
                return f.env.fcm.records.contains { $0.token == "doomed" && $0.status == 404 }
            }
            try await eventually("the queue is empty") { try await SQLiteMatrixStore(database: s.database).queued().isEmpty }
            let sent = f.env.fcm.records.count
            var next = message
            next["event_id"] = "$ev2"
            let r = try await s.notify(next, devices: [device(MatrixFakes.fcmApp, "doomed")])
            #expect(r.json == ["rejected": ["doomed"]])
            #expect(f.env.fcm.records.count == sent)
        }
    }

    @Test func aRepeatedEventIsNotPushedTwice() async throws {
        try await withMatrix { s, f in
            let devices = [device(MatrixFakes.fcmApp, "t1"), device(MatrixFakes.apnsApp, MatrixFakes.apnsPushkey)]
            #expect(try await s.notify(message, devices: devices).json == ["rejected": []])
            #expect(try await s.notify(message, devices: devices).json == ["rejected": []])
            #expect(f.env.fcm.records.count == 1)
            #expect(f.env.apns.records.count == 1)
            // Another event, and badge-only updates (no event id), are sent.
            var other = message
            other["event_id"] = "$ev2"
            _ = try await s.notify(other, devices: devices)
            _ = try await s.notify(["counts": ["unread": 0]], devices: devices)
            _ = try await s.notify(["counts": ["unread": 0]], devices: devices)
            #expect(f.env.fcm.records.count == 4)
            #expect(f.env.apns.records.count == 4)
        }
    }

    @Test func identicalNotificationsArrivingTogetherArePushedOnce() async throws {
        try await withMatrix { s, f in
            let devices = [device(MatrixFakes.fcmApp, "t1"), device(MatrixFakes.apnsApp, MatrixFakes.apnsPushkey)]
            let replies = try await withThrowingTaskGroup(of: HTTPReply.self) { group in
                for _ in 0..<12 { group.addTask { try await s.notify(message, devices: devices) } }
                return try await group.reduce(into: [HTTPReply]()) { $0.append($1) }
            }
            #expect(replies.count == 12)
            for r in replies {
                #expect(r.status == 200, "\(r.rawBody)")
                #expect(r.json == ["rejected": []])
            }
            #expect(f.env.fcm.records.count == 1)
            #expect(f.env.apns.records.count == 1)
        }
    }

    @Test func aRepeatOfAnEventThatWasNotSentTriesAgain() async throws {
        try await withMatrix { s, f in
            f.env.fcm.script("wrong-project", [.senderIDMismatch])
            let devices = [device(MatrixFakes.fcmApp, "t1"), device("org.unknown.app", "nobody-knows"), device(MatrixFakes.fcmApp, "wrong-project")]
            let first = try await s.notify(message, devices: devices)
            #expect(first.json == ["rejected": ["nobody-knows"]])
            // Only the delivered device counts as sent: the unmatched pushkey is rejected again and the permanent
            // failure is tried again.
            let repeated = try await s.notify(message, devices: devices)
            #expect(repeated.json == ["rejected": ["nobody-knows"]])
            #expect(f.env.fcm.records.filter { $0.token == "t1" }.count == 1)
            #expect(f.env.fcm.records.filter { $0.token == "wrong-project" }.count == 2)
        }
    }

    @Test func theDedupWindowExpires() async throws {
        try await withMatrix(configure: { c in c.matrix.dedupWindowMs = 60_000 }) { s, f in
            _ = try await s.notify(message, devices: [device(MatrixFakes.fcmApp, "t1")])
            s.clock.advance(by: 61)
            _ = try await s.notify(message, devices: [device(MatrixFakes.fcmApp, "t1")])
            #expect(f.env.fcm.records.count == 2)
        }
    }

    @Test func thePerPushkeyDailyLimitUsesTheQuotaLedger() async throws {
        try await withMatrix(configure: { c in c.matrix.apps = MatrixFakes.apps(dailyLimit: 2) }) { s, f in
            for k in 1...3 {
                var n = message
                n["event_id"] = .string("$e\(k)")
                let r = try await s.notify(n, devices: [device(MatrixFakes.fcmApp, "limited")])
                #expect(r.json == ["rejected": []])
            }
            #expect(f.env.fcm.records.count == 2)
            let limits = try await s.storage.quota.rateLimits(
                pushToken: "matrix:limited",
                appID: MatrixFakes.fcmApp,
                day: UTCDay(s.clock.now()),
                policy: QuotaPolicy(dailyLimit: 2)
            )
            #expect(limits.successful == 2)
            #expect(limits.attempts == 3)
            // Tomorrow the pushkey may be notified again.
            s.clock.advance(by: 86_400)
            var n = message
            n["event_id"] = "$tomorrow"
            _ = try await s.notify(n, devices: [device(MatrixFakes.fcmApp, "limited")])
            #expect(f.env.fcm.records.count == 3)
        }
    }

    @Test func badRequestsGetMatrixErrors() async throws {
        try await withMatrix(configure: { c in c.http.maxBodyBytes = 4096 }) { s, _ in
            expectMatrixError(try await s.request(.POST, "/_matrix/push/v1/notify", body: "{nope"), status: 400, errcode: "M_NOT_JSON")
            expectMatrixError(try await s.request(.POST, "/_matrix/push/v1/notify", body: ""), status: 400, errcode: "M_NOT_JSON")
            expectMatrixError(try await s.post("/_matrix/push/v1/notify", ["notification": [:]]), status: 400, errcode: "M_MISSING_PARAM")
            expectMatrixError(try await s.post("/_matrix/push/v1/notify", ["notification": ["devices": []]]), status: 400, errcode: "M_BAD_JSON")
            expectMatrixError(
                try await s.post("/_matrix/push/v1/notify", ["notification": ["devices": [["app_id": "a", "pushkey": 5]]]]),
                status: 400,
                errcode: "M_BAD_JSON"
            )
            let big = JSONValue.object(["notification": ["devices": [["app_id": "a", "pushkey": .string(String(repeating: "k", count: 5000))]]]])
            expectMatrixError(try await s.post("/_matrix/push/v1/notify", big), status: 413, errcode: "M_TOO_LARGE")
            let get = try await s.request(.GET, "/_matrix/push/v1/notify")
            expectMatrixError(get, status: 405, errcode: "M_UNRECOGNIZED")
            #expect(get.headers["allow"] == "POST")
        }
    }

    /// PushRelay's WebPush output, as it crossed the socket, decrypted and verified by independent Python code
    /// (`http_ece`, `py_vapid`, `cryptography`). Fails, not skips, when they are missing: `.ci/run` installs them.
    @Test func webPushInteropWithPythonImplementations() async throws {
        try await withMatrix { s, f in
            let sub = f.web.subscribe()
            let r = try await s.notify(message, devices: [webDevice(sub)])
            #expect(r.json == ["rejected": []])
            let rec = try #require(f.web.records.first)
            let input: JSONValue = [
                "body": .string(Base64URL.encode(rec.rawBody)), "authorization": .string(rec.headers["authorization"] ?? ""),
                "endpoint": .string(sub.endpoint), "receiver_private_key": .string(sub.privateKeyRaw), "auth": .string(sub.auth),
                "now": .int(Int64(s.clock.now().timeIntervalSince1970)),
            ]
            let script = RepositoryRoot.url.appendingPathComponent("Tests/Interop/webpush_interop.py").path
            let (status, out, err) = try await runPython(script, stdin: input.jsonString())
            try #require(
                status != 2,
                "the interop test needs Python packages: \(err). Install them with `python3 -m pip install http_ece py_vapid cryptography` (.ci/run does)."
            )
            #expect(status == 0, "interop check failed: \(err)")
            let result = try JSONParser.parse(Array(out.utf8))
            #expect(try JSONParser.parse(Array((result["plaintext"]?.stringValue ?? "").utf8)) == rec.json)
            #expect(result["claims"]?["sub"] == "mailto:ops@example.org")
            #expect(result["claims"]?["aud"] == .string(f.web.origin))
            #expect(result["k"] == .string(Base64URL.encode(f.vapidPublicKey.x963Representation)))
        }
    }
}

/// Runs `python3 script` with `stdin`; returns (exit status, stdout, stderr).
func runPython(_ script: String, stdin: String) async throws -> (Int32, String, String) {
    let r = try await ProcessSpawn.run(["python3", script], stdin: stdin)
    return (r.status, r.stdout, r.stderr)
}
