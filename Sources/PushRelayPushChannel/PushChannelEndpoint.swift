import Foundation
import Hummingbird
import Logging
import PushRelayCore
import PushRelayHTTP
import PushRelaySecurity
import PushRelayStore
import Synchronization

/// `GET /api/websocket`: Home Assistant's websocket protocol, serving the push-notification channel.
package struct PushChannelEndpoint: Sendable {
    /// Who authenticated, and so which channels they may open.
    package enum Credential: Sendable {
        /// The device's own push token: notifications addressed to that token.
        case pushToken(String)
        /// An admin-created channel token bound to one webhook id.
        case channelToken(webhookID: String)
    }

    package let hub: PushChannelHub
    package let store: any PushChannelStorage
    package let settings: PushChannelSettings
    package let limiter: FailedAuthLimiter
    package let clock: any TimePort
    package let logger: Logger

    package init(
        hub: PushChannelHub,
        store: any PushChannelStorage,
        settings: PushChannelSettings,
        limiter: FailedAuthLimiter,
        clock: any TimePort,
        logger: Logger
    ) {
        self.hub = hub
        self.store = store
        self.settings = settings
        self.limiter = limiter
        self.clock = clock
        self.logger = logger
    }
    /// Which refused subscriptions count as failed credential checks (once per address and pair a minute).
    package let refusals = PushChannelRefusals()

    /// Push tokens shorter than this are not accepted as credentials (real FCM and APNs tokens are far longer).
    static let minimumPushTokenLength = 32

    /// Where the push channel's websockets connect (Home Assistant's path).
    package static let path = "/api/websocket"

    /// A plain GET (no websocket upgrade) gets a JSON error; upgrades are taken by the connection's HTTP handlers
    /// (`PushRelayHTTPChannel`, given `PushChannelSockets` as the websocket's endpoint).
    package func register(_ routes: RouteTable<PushRelayRequestContext>) {
        routes.on(
            RouterPath(Self.path),
            [
                .get: { _, _ -> Response in
                    throw APIError(
                        .init(code: 426, reasonPhrase: "Upgrade Required"),
                        "UpgradeRequired",
                        "This is the push channel: connect with a websocket client (Upgrade: websocket).",
                        headers: [.upgrade: "websocket"]
                    )
                }
            ]
        )
    }

    /// A websocket was just upgraded: ask for authentication, and close it if none comes in time.
    package func opened(_ connection: PushChannelConnection) {
        connection.startAuthTimer(after: .milliseconds(settings.authTimeoutMs), clock: clock) { [settings] in
            if !connection.isAuthenticated && !connection.isClosed {
                connection.send(
                    PushChannelWire.authInvalid(
                        "Authentication timed out: send {\"type\":\"auth\",\"access_token\":…} within \(settings.authTimeoutMs / 1000) s."
                    )
                )
                connection.markClosed(.authFailed)
            }
        }
        // After the timer is set: a client that has the greeting knows its time is running.
        connection.send(PushChannelWire.authRequired(version: PushRelayVersion.string))
    }

    /// The socket is gone: its channels' unconfirmed messages fall back (or stay queued).
    package func closed(_ connection: PushChannelConnection) async {
        connection.cancelAuthTimer()
        connection.markClosed(.clientGone)
        await hub.disconnected(connection)
    }

    package struct Session {
        package let connection: PushChannelConnection
        package var credential: Credential?
        var lastID: Int64 = 0
    }

    /// Handles one text message of a connection (messages of one connection are handled one at a time, in order).
    package func handle(_ text: String, session: inout Session) async {
        let c = session.connection
        let message: PushChannelWire.ClientMessage
        do {
            message = try PushChannelWire.parse(text)
        } catch {
            if session.credential == nil {
                c.send(PushChannelWire.authInvalid("Expected {\"type\":\"auth\",\"access_token\":…}: \(error.message)"))
                c.markClosed(.authFailed)
            } else {
                c.send(PushChannelWire.error(id: error.id, .invalidFormat, error.message))
            }
            return
        }
        guard let credential = session.credential else {
            guard case .auth(let token) = message else {
                c.send(PushChannelWire.authInvalid("Authenticate first: send {\"type\":\"auth\",\"access_token\":…}."))
                c.markClosed(.authFailed)
                return
            }
            if limiter.isBlocked(c.peer, now: clock.now()) {
                c.send(PushChannelWire.authInvalid(FailedAuthLimiter.blockedMessage))
                c.markClosed(.authFailed)
            } else if let credential = await authenticate(token, peer: c.peer) {
                session.credential = credential
                c.markAuthenticated()
                c.send(PushChannelWire.authOK(version: PushRelayVersion.string))
            } else {
                c.send(
                    PushChannelWire.authInvalid(
                        "Invalid access token: use the device's push token or a channel token from `pushrelay channel-token create`."
                    )
                )
                c.markClosed(.authFailed)
            }
            return
        }
        if case .auth = message {
            c.send(PushChannelWire.error(id: nil, .invalidFormat, "Already authenticated."))
            return
        }
        let id = message.commandID
        guard id > session.lastID else {
            c.send(PushChannelWire.error(id: id, .idReuse, "Command ids must increase (last was \(session.lastID))."))
            return
        }
        session.lastID = id
        switch message {
        case .auth:
            break
        case .ping(let id):
            c.send(PushChannelWire.pong(id: id))
        case .subscribe(let id, let webhookID, let supportConfirm, let fallback):
            let now = clock.now()
            guard !limiter.isBlocked(c.peer, now: now) else {
                refuseBlocked(c, id: id)
                return
            }
            if let problem = FieldLimits.problem(webhookID, field: "webhook_id", limit: FieldLimits.identifier) {
                c.send(PushChannelWire.error(id: id, .invalidFormat, problem))
                return
            }
            let verdict = await verdict(credential, webhookID: webhookID)
            guard verdict != .refused else {
                refuseSubscription(c, id: id, credential: credential, webhookID: webhookID, now: now)
                return
            }
            let pushToken: String? = if case .pushToken(let t) = credential { t } else { nil }
            let sub = PushChannelSubscription(
                connection: c,
                id: id,
                webhookID: webhookID,
                pushToken: pushToken,
                supportConfirm: supportConfirm,
                fallback: fallback
            )
            do {
                // The result goes out once registered and before any replayed event.
                try await hub.subscribe(
                    sub,
                    provisional: verdict == .provisional,
                    stillAllowed: { [self] in
                        await self.verdict(credential, webhookID: webhookID) != .refused
                    }
                ) { c.send(PushChannelWire.success(id: id)) }
            } catch {
                switch error {
                case .tooManyChannels:
                    c.send(
                        PushChannelWire.error(
                            id: id,
                            .tooManyChannels,
                            "This server holds its maximum of \(settings.maxChannels) channels (channel.max_channels)."
                        )
                    )
                case .tooManyChannelsFromAddress:
                    c.send(
                        PushChannelWire.error(
                            id: id,
                            .tooManyChannels,
                            "This address holds its maximum of \(settings.maxChannelsPerAddress) channels (channel.max_channels_per_address)."
                        )
                    )
                case .tooManyProvisionalChannels:
                    c.send(
                        PushChannelWire.error(
                            id: id,
                            .tooManyChannels,
                            "This server holds its maximum of \(settings.maxProvisionalChannels) channels that Home Assistant has not paired yet (half of channel.max_channels). Subscribe again once Home Assistant has sent a notification for this device."
                        )
                    )
                case .notBound:
                    refuseSubscription(c, id: id, credential: credential, webhookID: webhookID, now: now)
                }
            }
        case .confirm(let id, let webhookID, let confirmID):
            if await hub.confirm(confirmID, webhookID: webhookID, connection: c) {
                c.send(PushChannelWire.success(id: id))
            } else {
                c.send(PushChannelWire.error(id: id, .notFound, "Push notification channel not found, or the confirm id is unknown or expired."))
            }
        case .unsubscribe(let id, let subscription):
            if await hub.unsubscribe(connection: c, subscriptionID: subscription) {
                c.send(PushChannelWire.success(id: id))
            } else {
                c.send(PushChannelWire.error(id: id, .notFound, "No subscription \(subscription) on this connection."))
            }
        case .unknown(let id, let type):
            c.send(PushChannelWire.error(id: id, .unknownCommand, "Unknown command '\(type)'."))
        }
    }

    /// One answer for every refused subscription, whichever part of the pair was wrong: it names the rule, not what
    /// PushRelay knows about the token or the webhook id. Counts as a failed credential check of the address, once
    /// per address and pair a minute (`PushChannelRefusals`): a device refused again and again with its own pair
    /// counts once, each new pair a guesser tries counts.
    private func refuseSubscription(_ c: PushChannelConnection, id: Int64, credential: Credential, webhookID: String, now: Date) {
        c.send(PushChannelWire.error(id: id, .unauthorized, Self.notBoundMessage))
        logger.info("websocket subscription refused", metadata: ["peer": .string(c.peer)])
        let presented: String
        switch credential {
        case .pushToken(let token): presented = "t:" + token
        case .channelToken(let bound): presented = "c:" + bound
        }
        guard refusals.counts(address: c.peer, credential: presented, webhookID: webhookID, now: now) else { return }
        if limiter.recordFailure(c.peer, now: now) {
            c.markClosed(.authFailed)
        }
    }

    private func refuseBlocked(_ c: PushChannelConnection, id: Int64) {
        c.send(PushChannelWire.error(id: id, .unauthorized, FailedAuthLimiter.blockedMessage))
        c.markClosed(.authFailed)
    }

    static let notBoundMessage = """
        This credential may not subscribe to that webhook id. A push token may subscribe only to the webhook id Home \
        Assistant sends its notifications with (or, before Home Assistant's first notification for the device, to a \
        webhook id no other device holds); a channel token only to the webhook id it was created for.
        """

    private func authenticate(_ token: String, peer: String) async -> Credential? {
        let now = clock.now()
        var credential: Credential?
        if let webhookID = try? await store.webhookID(forChannelToken: token) {
            credential = .channelToken(webhookID: webhookID)
        } else if token.count >= Self.minimumPushTokenLength, token.utf8.count <= FieldLimits.token, !token.hasPrefix("prc_") {
            credential = .pushToken(token)
        }
        if credential == nil {
            limiter.recordFailure(peer, now: now)
            logger.info("websocket authentication failed", metadata: ["peer": .string(peer)])
        }
        return credential
    }

    private func verdict(_ credential: Credential, webhookID: String) async -> PushChannelBindingRegistry.Verdict {
        switch credential {
        case .channelToken(let bound):
            return bound == webhookID ? .bound : .refused
        case .pushToken(let token):
            return await hub.bindings.verdict(pushToken: token, webhookID: webhookID)
        }
    }
}

extension PushChannelWire.ClientMessage {
    var commandID: Int64 {
        switch self {
        case .auth: return 0
        case .ping(let id), .subscribe(let id, _, _, _), .confirm(let id, _, _), .unsubscribe(let id, _), .unknown(let id, _): return id
        }
    }
}
