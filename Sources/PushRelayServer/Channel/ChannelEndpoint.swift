import Foundation
import Hummingbird
import Logging
import PushRelayCore
import PushRelayStore
import ServiceLifecycle
import Synchronization

/// Limits failed websocket authentications per client address (a sliding one-minute window).
final class AuthFailureLimiter: Sendable {
    private let limit: Int
    private let failures = Mutex<[String: [Date]]>([:])

    init(limit: Int) { self.limit = limit }

    func isBlocked(_ peer: String, now: Date) -> Bool {
        failures.withLock { f in
            let recent = (f[peer] ?? []).filter { now.timeIntervalSince($0) < 60 }
            f[peer] = recent.isEmpty ? nil : recent
            return recent.count >= limit
        }
    }

    func recordFailure(_ peer: String, now: Date) {
        failures.withLock { $0[peer, default: []].append(now) }
    }
}

/// `GET /api/websocket`: Home Assistant's websocket protocol, serving the push-notification channel.
struct ChannelEndpoint: Sendable {
    /// Who authenticated, and so which channels they may open.
    enum Credential: Sendable {
        /// The device's own push token: notifications addressed to that token.
        case pushToken(String)
        /// An admin-created channel token bound to one webhook id.
        case channelToken(webhookID: String)
    }

    let hub: ChannelHub
    let store: ChannelStore
    let settings: ChannelSettings
    let limiter: AuthFailureLimiter
    let clock: any WallClock
    let logger: Logger

    /// Push tokens shorter than this are not accepted as credentials (real FCM and APNs tokens are far longer).
    static let minimumPushTokenLength = 32

    /// A plain GET (no websocket upgrade) gets a JSON error; upgrades are taken by `PushRelayHTTPChannel`.
    func register(_ routes: RouteTable<PushRelayRequestContext>) {
        routes.on(RouterPath(PushRelayHTTPChannel.path), [.get: { _, _ -> Response in
            throw APIError(.init(code: 426, reasonPhrase: "Upgrade Required"), "UpgradeRequired",
                           "This is the websocket push channel: connect with a websocket client (Upgrade: websocket).",
                           headers: [.upgrade: "websocket"])
        }])
    }

    /// A websocket was just upgraded: ask for authentication, and close it if none comes in time.
    func opened(_ connection: ChannelConnection) {
        connection.send(ChannelWire.authRequired(version: PushRelayVersion.string))
        connection.startAuthTimer(milliseconds: settings.authTimeoutMs) { [settings] in
            if !connection.isAuthenticated && !connection.isClosed {
                connection.send(ChannelWire.authInvalid("Authentication timed out: send {\"type\":\"auth\",\"access_token\":…} within \(settings.authTimeoutMs / 1000) s."))
                connection.markClosed(.authFailed)
            }
        }
    }

    /// The socket is gone: its channels' unconfirmed messages fall back (or stay queued).
    func closed(_ connection: ChannelConnection) async {
        connection.cancelAuthTimer()
        connection.markClosed(.clientGone)
        await hub.disconnected(connection)
    }

    struct Session {
        let connection: ChannelConnection
        var credential: Credential?
        var lastID: Int64 = 0
    }

    /// Handles one text message of a connection (messages of one connection are handled one at a time, in order).
    func handle(_ text: String, session: inout Session) async {
        let c = session.connection
        let message: ChannelWire.ClientMessage
        do {
            message = try ChannelWire.parse(text)
        } catch {
            if session.credential == nil {
                c.send(ChannelWire.authInvalid("Expected {\"type\":\"auth\",\"access_token\":…}: \(error.message)"))
                c.markClosed(.authFailed)
            } else {
                c.send(ChannelWire.error(id: error.id, .invalidFormat, error.message))
            }
            return
        }
        guard let credential = session.credential else {
            guard case .auth(let token) = message else {
                c.send(ChannelWire.authInvalid("Authenticate first: send {\"type\":\"auth\",\"access_token\":…}."))
                c.markClosed(.authFailed)
                return
            }
            if let credential = await authenticate(token, peer: c.peer) {
                session.credential = credential
                c.markAuthenticated()
                c.send(ChannelWire.authOK(version: PushRelayVersion.string))
            } else {
                c.send(ChannelWire.authInvalid("Invalid access token: use the device's push token or a channel token from `pushrelay channel-token create`."))
                c.markClosed(.authFailed)
            }
            return
        }
        if case .auth = message {
            c.send(ChannelWire.error(id: nil, .invalidFormat, "Already authenticated."))
            return
        }
        let id = message.commandID
        guard id > session.lastID else {
            c.send(ChannelWire.error(id: id, .idReuse, "Command ids must increase (last was \(session.lastID))."))
            return
        }
        session.lastID = id
        switch message {
        case .auth:
            break
        case .ping(let id):
            c.send(ChannelWire.pong(id: id))
        case .subscribe(let id, let webhookID, let supportConfirm, let fallback):
            guard await may(credential, subscribeTo: webhookID) else {
                c.send(ChannelWire.error(id: id, .unauthorized, "This credential is not linked to webhook id \(webhookID)."))
                return
            }
            let pushToken: String? = if case .pushToken(let t) = credential { t } else { nil }
            let sub = ChannelSubscription(connection: c, id: id, webhookID: webhookID, pushToken: pushToken,
                                          supportConfirm: supportConfirm, fallback: fallback)
            do {
                // The result goes out once registered and before any replayed event.
                try await hub.subscribe(sub) { c.send(ChannelWire.success(id: id)) }
            } catch {
                c.send(ChannelWire.error(id: id, .tooManyChannels, "This server holds its maximum of \(settings.maxChannels) channels (channel.max_channels)."))
            }
        case .confirm(let id, let webhookID, let confirmID):
            if await hub.confirm(confirmID, webhookID: webhookID, connection: c) {
                c.send(ChannelWire.success(id: id))
            } else {
                c.send(ChannelWire.error(id: id, .notFound, "Push notification channel not found, or the confirm id is unknown or expired."))
            }
        case .unsubscribe(let id, let subscription):
            if await hub.unsubscribe(connection: c, subscriptionID: subscription) {
                c.send(ChannelWire.success(id: id))
            } else {
                c.send(ChannelWire.error(id: id, .notFound, "No subscription \(subscription) on this connection."))
            }
        case .unknown(let id, let type):
            c.send(ChannelWire.error(id: id, .unknownCommand, "Unknown command '\(type)'."))
        }
    }

    private func authenticate(_ token: String, peer: String) async -> Credential? {
        let now = clock.now()
        if limiter.isBlocked(peer, now: now) { return nil }
        var credential: Credential?
        if let webhookID = try? await store.webhookID(forChannelToken: token) {
            credential = .channelToken(webhookID: webhookID)
        } else if token.count >= Self.minimumPushTokenLength, !token.hasPrefix("prc_") {
            credential = .pushToken(token)
        }
        if credential == nil {
            limiter.recordFailure(peer, now: now)
            logger.info("websocket authentication failed", metadata: ["peer": .string(peer)])
        }
        return credential
    }

    private func may(_ credential: Credential, subscribeTo webhookID: String) async -> Bool {
        switch credential {
        case .channelToken(let bound):
            return bound == webhookID
        case .pushToken(let token):
            // A push token is linked to the webhook id Home Assistant sent it with (if it has been seen yet).
            guard let seen = try? await store.lastWebhookID(forPushToken: token) else { return true }
            return seen == webhookID
        }
    }
}

extension ChannelWire.ClientMessage {
    var commandID: Int64 {
        switch self {
        case .auth: return 0
        case .ping(let id), .subscribe(let id, _, _, _), .confirm(let id, _, _), .unsubscribe(let id, _), .unknown(let id, _): return id
        }
    }
}

/// Recovers stored channel messages at start, drops expired queued ones periodically, and closes connections on shutdown.
struct ChannelService: Service {
    let hub: ChannelHub
    let store: ChannelStore
    let sockets: ChannelSockets
    let clock: any WallClock
    let logger: Logger

    func run() async throws {
        await hub.recover()
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(60)) }
            _ = try? await store.dropExpired(now: clock.now())
        }
        // The websockets hold no task the server would wait for: say goodbye to each of them.
        sockets.closeAll()
    }
}
