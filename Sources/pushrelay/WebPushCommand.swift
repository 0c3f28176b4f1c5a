import ArgumentParser
import Foundation
import PushRelayWebPush

/// `pushrelay webpush …`: WebPush helpers.
struct WebPushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush",
        abstract: "WebPush helpers.",
        subcommands: [GenerateVAPIDKey.self]
    )

    struct GenerateVAPIDKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate-vapid-key",
            abstract: "Write a new VAPID private key (PEM) and print the applicationServerKey browsers subscribe with.",
            discussion: """
                Point a webpush provider's vapid_private_key at the file. Give the printed applicationServerKey to \
                pushManager.subscribe({userVisibleOnly: true, applicationServerKey: …}) in the web app.
                """
        )

        @Option(help: "Where to write the PEM (mode 0600).") var out = "vapid_private_key.pem"
        @Flag(help: "Overwrite an existing file (subscriptions made with the old key stop working).") var force = false

        func run() throws {
            if FileManager.default.fileExists(atPath: out), !force {
                throw ValidationError("'\(out)' exists; pass --force to replace it (browsers subscribed with the old key will stop receiving pushes)")
            }
            let (key, pem) = VAPIDKey.generate()
            do {
                try VAPIDKeyFile.write(pem + "\n", to: out, replacing: force)
            } catch let error as VAPIDKeyFile.WriteError where error.exists {
                throw ValidationError("'\(out)' exists; pass --force to replace it (browsers subscribed with the old key will stop receiving pushes)")
            } catch {
                throw ValidationError("\(error)")
            }
            print("wrote \(out)")
            print("applicationServerKey: \(VAPIDSigner(key: key, contact: "unused@example.org").applicationServerKey)")
        }
    }
}
