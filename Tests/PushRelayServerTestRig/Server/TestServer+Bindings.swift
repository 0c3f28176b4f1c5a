import Foundation
import PushRelaySQLite
import PushRelayStore

extension TestServer {
    /// Binds `token` to `webhookID` in the server's database, as a notification that proves the pair would (a counted
    /// one a provider took, or one through a closed route), without sending one: a channel then subscribed with the
    /// pair is paired, and Home Assistant's notifications go over it from the first one.
    package func bind(_ token: String, webhookID: String = "hook-1") async throws {
        _ = try await SQLitePushChannelStore(database: database).bind(PushChannelBinding(pushToken: token, webhookID: webhookID), now: clock.now())
    }
}
