import ArgumentParser
import Foundation
import PushRelayStore

struct APIKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-key",
        abstract: "Manage API keys for /api/v1/devices and /api/v1/calls (sent as 'Authorization: Bearer <key>').",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a key; it is printed once, as the last line, and stored hashed.")
        @OptionGroup var options: ConfigOption
        @Option(help: "A note for `api-key list`.") var label: String?

        func run() async throws {
            let storage = try await openStorage(try options.load())
            let (key, id) = try await storage.apiKeys.createAPIKey(label: label, now: Date())
            print("API key \(id) (shown only now; store it with the calling service):")
            print(key)
            try await storage.engine.flushAndClose()
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List API keys (never the keys themselves).")
        @OptionGroup var options: ConfigOption

        func run() async throws {
            let storage = try await openStorage(try options.load())
            let keys = try await storage.apiKeys.listAPIKeys()
            if keys.isEmpty { print("(no API keys)") }
            for k in keys {
                print("\(k.id)  created \(k.createdAt)" + (k.label.map { "  \"\($0)\"" } ?? "") + (k.revokedAt.map { "  REVOKED \($0)" } ?? ""))
            }
            try await storage.engine.flushAndClose()
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an API key by id; requests with it are answered 401 at once.")
        @OptionGroup var options: ConfigOption
        @Argument(help: "The key id from `api-key list`.") var id: Int64

        func run() async throws {
            let storage = try await openStorage(try options.load())
            let revoked = try await storage.apiKeys.revokeAPIKey(id: id, now: Date())
            print(revoked ? "API key \(id) revoked" : "no live API key with id \(id)")
            try await storage.engine.flushAndClose()
            if !revoked { throw ExitCode(1) }
        }
    }
}
