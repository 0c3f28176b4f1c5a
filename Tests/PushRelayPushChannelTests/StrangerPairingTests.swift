import Foundation
import PushRelayCore
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import Testing

@testable import PushRelayServer

/// A stranger who subscribes with a made-up push token and webhook id, then posts that pair to the open Home Assistant
/// routes: the post is delivered (to the stranger's own channel, for a local-only app) or refused by the provider, but
/// it binds nothing, so the stranger's channel stays provisional and gives way to devices Home Assistant bound. Over a
/// real server on loopback with a real SQLite file.
///
/// Load: strangers' and devices' channels and posts at once, each answer held to a 10 s client limit.
@Suite struct StrangerPairingTests {
    static let invalid = DeliveryFailure.invalidToken(reason: "UNREGISTERED", message: "Requested entity was not found.")

    @Test func selfPairedStrangersCannotKeepBoundDevicesOut() async throws {
        // The provider refuses the strangers' made-up tokens (the first call) and takes the devices' real ones.
        let cloud = ScriptedProvider(name: "cloud", [.fail(Self.invalid), .deliver])
        let configure = PushChannelRig.cloud { $0.channel.maxChannels = 5 }
        try await TestServer.with(providers: ["cloud": cloud], configure: configure) { s in
            // Five strangers try: each subscribes with a made-up pair and posts it, once by a local-only app (delivered
            // over its own channel, no provider) and once by a cloud app (the provider refuses the token).
            var strangers: [WSTestClient] = []
            for i in 0..<5 {
                let token = PushChannelRig.token("stranger-\(i)")
                let c = try await PushChannelRig.authenticated(s, token)
                let reply = try await PushChannelRig.subscribe(c, webhookID: "stranger-hook-\(i)")
                strangers.append(c)
                guard i < 2 else {
                    // Still provisional, the first two hold the provisional share (half of 5): nobody else gets one.
                    StrangerBoundsTests.expectTooManyChannels(reply, naming: "Home Assistant has not paired")
                    continue
                }
                #expect(reply["success"] == true, "\(reply)")
                if i == 0 {
                    let r = try await s.android(StrangerBoundsTests.localOnly("self-paired", token: token, webhookID: "stranger-hook-0"))
                    #expect(r.status == 201, "\(r.rawBody)")
                    #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == true, "delivered over the stranger's own channel")
                    #expect(try await c.receive()["event"]?["message"] == "self-paired")
                } else {
                    let r = try await s.android(PushChannelRig.body("self-paired", token: token, webhookID: "stranger-hook-1"))
                    #expect(r.status != 201, "the provider refused the made-up token: \(r.rawBody)")
                    #expect(c.pendingFrames.isEmpty, "a cloud app's post never went to the provisional channel")
                }
            }
            #expect(try await SQLitePushChannelStore(database: s.database).bindings().isEmpty, "no stranger's post bound a pair")

            // Five devices Home Assistant bound (the provider took a counted notification for each): all get in, the
            // strangers' channels give way, oldest first.
            var devices: [WSTestClient] = []
            for i in 0..<5 {
                let token = PushChannelRig.token("device-\(i)")
                let r = try await s.android(PushChannelRig.body("pairs \(i)", token: token, webhookID: "device-hook-\(i)"))
                #expect(r.status == 201, "\(r.rawBody)")
                let c = try await PushChannelRig.authenticated(s, token)
                #expect(try await PushChannelRig.subscribe(c, webhookID: "device-hook-\(i)")["success"] == true, "device \(i)")
                devices.append(c)
            }
            #expect(await strangers[0].waitUntilClosed())
            #expect(await strangers[1].waitUntilClosed())
            let r = try await s.android(
                PushChannelRig.body("for device 4", token: PushChannelRig.token("device-4"), webhookID: "device-hook-4")
            )
            #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == true, "\(r.rawBody)")
            #expect(try await devices[4].receive()["event"]?["message"] == "for device 4")
            withExtendedLifetime((strangers, devices)) {}
        }
    }

    @Test func aProvisionalChannelOfACloudAppIsPairedByItsFirstCloudNotification() async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        try await TestServer.with(providers: ["cloud": cloud], configure: PushChannelRig.cloud()) { s in
            let token = PushChannelRig.token("device")
            let device = try await PushChannelRig.authenticated(s, token)
            #expect(try await PushChannelRig.subscribe(device, webhookID: "hook-1")["success"] == true)
            // The first notification goes by the cloud, where the provider checks the token, and binds the pair…
            let first = try await s.android(PushChannelRig.body("first", token: token, webhookID: "hook-1"))
            #expect(first["messageId"]?.stringValue?.hasPrefix("local:") == false, "\(first.rawBody)")
            #expect(cloud.callCount == 1)
            #expect(
                try await SQLitePushChannelStore(database: s.database).bindings() == [PushChannelBinding(pushToken: token, webhookID: "hook-1")]
            )
            // …and from then on the channel is paired: notifications go over it.
            let second = try await s.android(PushChannelRig.body("second", token: token, webhookID: "hook-1"))
            #expect(second["messageId"]?.stringValue?.hasPrefix("local:") == true, "\(second.rawBody)")
            #expect(try await device.receive()["event"]?["message"] == "second")
            #expect(cloud.callCount == 1)
        }
    }
}
