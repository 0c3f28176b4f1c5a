import Foundation

/// Which configured Matrix app serves a device's `app_id`: `matrix.apps` keys are app ids or globs.
///
/// An exact key wins. Otherwise every glob key is tried; exactly one must match. No match, or several matching globs,
/// means the pushkey is rejected without a push (Sygnal's rule: an ambiguous config must not guess).
public struct MatrixAppTable<App: Sendable>: Sendable {
    public enum Match: Sendable {
        case app(key: String, App)
        case noMatch
        case ambiguous([String])
    }

    private let exact: [String: App]
    private let globs: [(key: String, glob: Glob, app: App)]

    public init(_ apps: [String: App]) {
        var exact: [String: App] = [:]
        var globs: [(String, Glob, App)] = []
        for key in apps.keys.sorted() {
            let app = apps[key]!
            if key.contains(where: { $0 == "*" || $0 == "?" }) {
                globs.append((key, Glob(key), app))
            } else {
                exact[key] = app
            }
        }
        self.exact = exact
        self.globs = globs
    }

    public func match(_ appID: String) -> Match {
        if let app = exact[appID] { return .app(key: appID, app) }
        let hits = globs.filter { $0.glob.matches(appID) }
        switch hits.count {
        case 0: return .noMatch
        case 1: return .app(key: hits[0].key, hits[0].app)
        default: return .ambiguous(hits.map(\.key))
        }
    }
}

/// What a Matrix translation decided for one device.
public enum MatrixTranslation: Sendable, Equatable {
    /// Send this to `token` (the provider's device token: for APNs the hex form of the pushkey).
    case send(TranslatedNotification, token: String)
    /// Nothing worth sending (no alert and no badge; `events_only` without an event; a badge-only FCM push with
    /// nothing to say). The device counts as served: nothing is rejected.
    case skip(reason: String)
    /// The pushkey (or the pusher's data) can never work: answer it in `rejected`.
    case reject(reason: String)
    /// The notification cannot be made to fit the provider's size limit.
    case tooLarge(reason: String)
}

/// How a Matrix app's notifications are shaped: for FCM, for APNs, or for WebPush, with the app's format options.
public enum MatrixFormat: Sendable, Equatable {
    case fcm(MatrixFCMOptions)
    case apns(MatrixAPNsOptions)
    case webPush

    /// The three shapes, without their options: what the config's `platform` and the delivery log name.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case fcm
        case apns
        case webPush = "webpush"
    }

    /// Which of the three shapes this is.
    public var kind: Kind {
        switch self {
        case .fcm: .fcm
        case .apns: .apns
        case .webPush: .webPush
        }
    }

    /// The one spelling of a pushkey that names its device, so that quotas, the dead-token memory and de-duplication
    /// count devices, not spellings. An APNs pushkey is a device token: base64 in either alphabet, padded or not
    /// (`convert_device_token_to_hex`), re-encoded as padded standard base64; or hex in either case, lower-cased.
    /// Other pushkeys (FCM tokens, WebPush endpoints) are case-sensitive and unchanged, as is a pushkey that cannot
    /// be a device token (it is rejected as it was sent).
    public func canonicalPushkey(_ pushkey: String) -> String {
        guard case .apns(let o) = self else { return pushkey }
        guard o.convertDeviceTokenToHex else { return MatrixAPNsTranslation.deviceToken(pushkey, convertToHex: false) ?? pushkey }
        return MatrixAPNsTranslation.deviceTokenBytes(pushkey)?.base64EncodedString() ?? pushkey
    }

    /// The provider-ready form of the notification for one of its devices.
    public func translate(_ n: MatrixNotification, device: MatrixDevice) -> MatrixTranslation {
        switch self {
        case .fcm(let o): return MatrixFCMTranslation.translate(n, device: device, options: o)
        case .apns(let o): return MatrixAPNsTranslation.translate(n, device: device, options: o)
        case .webPush: return MatrixWebPushTranslation.translate(n, device: device)
        }
    }
}
