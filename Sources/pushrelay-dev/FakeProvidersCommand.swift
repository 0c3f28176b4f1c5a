import ArgumentParser
import Crypto
import Foundation
import PushRelayCore
import PushRelayTestSupport

/// `pushrelay-dev fake-providers`: strict fake APNs and FCM on loopback, for trying PushRelay and for the benchmarks.
struct FakeProviders: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fake-providers",
        abstract:
            "Run a fake APNs (HTTP/2 + TLS) and a fake FCM (OAuth + messages:send) on loopback, and write a ready-to-use PushRelay config for them.",
        discussion: """
            Generates a test CA, an APNs .p8 key and a Google service account, starts both fakes, and writes \
            DIR/pushrelay.yaml (plus the credentials) routing every app to the fake FCM, as the companion apps \
            register FCM tokens on both platforms (with --ios-via-apns, the iOS app's bundle goes to the fake APNs \
            instead, for builds that register hex APNs tokens). Then run `pushrelay serve --config DIR/pushrelay.yaml` in another terminal and \
            POST notifications to it: every request the fakes receive is printed here. Stop with Ctrl-C.
            """
    )

    @Option(help: "Port of the fake APNs (0 picks a free one).") var apnsPort = 8443
    @Option(help: "Port of the fake FCM (0 picks a free one).") var fcmPort = 8444
    @Option(help: "Folder for the generated config and credentials.") var out = "./fake-providers"
    @Flag(help: "The fake FCM speaks only HTTP/1.1 (over TLS), as a server without HTTP/2 would.") var fcmHttp1Only = false
    @Option(help: "The iOS app's bundle id (the APNs topic).") var bundleId = "io.robbie.HomeAssistant"
    @Flag(help: "Route the iOS app's bundle (--bundle-id) to the fake APNs, for builds that register hex APNs tokens.") var iosViaApns = false
    @Option(
        help: """
            Also run a fake WebPush service with this many browser subscriptions (one per line in             DIR/webpush-subscriptions.txt: endpoint, p256dh, auth) and configure a `webpush` provider for it.
            """
    ) var webpushSubscriptions = 0

    func run() async throws {
        let dir = URL(fileURLWithPath: out).standardizedFileURL.path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let env = try await FakeProviderEnvironment.start(
            directory: dir,
            bundleID: bundleId,
            apnsPort: apnsPort,
            fcmPort: fcmPort,
            fcmOffersHTTP2: !fcmHttp1Only
        )
        let configFile = dir + "/pushrelay.yaml"
        // The providers' options as JSON too, for `pushrelay-dev provider-load`.
        try JSONWriter.string(.object(env.fcmOptions)).write(toFile: dir + "/fcm-options.json", atomically: true, encoding: .utf8)
        try JSONWriter.string(.object(env.apnsOptions)).write(toFile: dir + "/apns-options.json", atomically: true, encoding: .utf8)
        let webPush = webpushSubscriptions > 0 ? try await Self.startWebPush(env: env, directory: dir, subscriptions: webpushSubscriptions) : nil
        try DevConfig.yaml(env: env, directory: dir, iosViaAPNs: iosViaApns, webPush: webPush?.yaml).write(
            toFile: configFile,
            atomically: true,
            encoding: .utf8
        )
        print(
            """
            fake APNs: \(env.apns.endpoint)  (topic \(env.bundleID), key id \(env.apnsKey.keyID), team \(env.apnsKey.teamID))
            fake FCM:  \(env.fcm.endpoint)  (project \(env.serviceAccount.projectID))
            config:    \(configFile)

            next:  pushrelay serve --config \(configFile)
            then:  curl -s -X POST http://127.0.0.1:8080/api/sendPush/android/v1 -H 'Content-Type: application/json' \\
                     -d '{"message":"Hello","push_token":"demo:token","registration_info":{"app_id":"io.homeassistant.companion.android"}}'
                   curl -s -X POST http://127.0.0.1:8080/api/sendPushNotification -H 'Content-Type: application/json' \\
                     -d '{"message":"Hello","push_token":"\(iosViaApns ? String(repeating: "ab", count: 32) : "demo-ios:token")","registration_info":{"app_id":"\(env.bundleID)"}}'

            \(webPush.map { "fake WebPush: \($0.fake.origin)  (\(webpushSubscriptions) subscriptions in \(dir)/webpush-subscriptions.txt)\n" } ?? "")
            waiting for requests (Ctrl-C to stop)…
            """
        )
        fflush(nil)
        while !Task.isCancelled {
            for r in env.fcm.takeRecords() {
                print("FCM  \(r.status) \(r.path) token=\(TokenDisplay.short(r.token ?? "?")) \(r.reason ?? "")")
                if let body = r.body { print("     \(body.jsonString())") }
            }
            for r in env.apns.takeRecords() {
                print("APNs \(r.status) \(r.path) push-type=\(r.headers["apns-push-type"] ?? "?") \(r.reason ?? "")")
                if let payload = r.payload { print("     \(payload.jsonString())") }
            }
            for r in webPush?.fake.takeRecords() ?? [] {
                print("WebPush \(r.status) \(r.path) \(r.problem ?? "")")
                if let json = r.json { print("     \(json.jsonString())") }
            }
            fflush(nil)
            do { try await Task.sleep(for: .milliseconds(300)) } catch { break }
        }
        await webPush?.fake.shutdown()
        await env.shutdown()
    }

    /// A fake WebPush service with `subscriptions` subscriptions written to `directory`, a VAPID key for it, and the
    /// YAML lines of a `webpush` provider that may reach it on loopback.
    static func startWebPush(env: FakeProviderEnvironment, directory: String, subscriptions: Int) async throws -> (fake: FakeWebPush, yaml: String) {
        let vapid = P256.Signing.PrivateKey()
        let fake = FakeWebPush(authority: env.authority, vapidPublicKey: vapid.publicKey)
        try await fake.start()
        let keyFile = directory + "/vapid_private_key.pem"
        try vapid.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let lines = (0..<subscriptions).map { _ in
            let s = fake.subscribe()
            return "\(s.endpoint) \(s.p256dh) \(s.auth)\n"
        }
        try lines.joined().write(toFile: directory + "/webpush-subscriptions.txt", atomically: true, encoding: .utf8)
        let yaml = """
              webpush:
                type: webpush
                vapid_private_key: \(keyFile)
                vapid_contact_email: bench@example.org
                allowed_endpoints: ["127.0.0.1:*"]
                allowed_private_networks: ["127.0.0.1/32"]
                ca_file: \(env.caFile)
            """
        return (fake, yaml)
    }
}

/// The config `pushrelay-dev fake-providers` writes (also used by the end-to-end tests and the benchmark).
enum DevConfig {
    /// `iosViaAPNs`: the iOS app's bundle goes to the fake APNs; otherwise every app goes to the fake FCM.
    static func yaml(env: FakeProviderEnvironment, directory: String, iosViaAPNs: Bool = false, webPush: String? = nil) -> String {
        let iosRoute = iosViaAPNs ? "  - match: \"\(env.bundleID)*\"\n    provider: apns\n" : ""
        return """
            # Generated by `pushrelay-dev fake-providers`: PushRelay talking to the fake APNs and FCM on loopback.
            storage:
              sqlite_path: \(directory)/pushrelay.sqlite
            providers:
              fcm:
                type: fcm
            \(env.fcmYAML)
              apns:
                type: apns
            \(env.apnsYAML)
            \(webPush ?? "")
            apps:
            \(iosRoute)  - match: "*"
                provider: fcm

            """
    }
}
