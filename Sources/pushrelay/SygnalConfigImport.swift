import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer

/// Converts the `apps:` section of a Sygnal config (`sygnal.yaml`) into PushRelay's `providers:` and `matrix.apps:`.
///
/// Every Sygnal app becomes one provider (named after the app id) and one `matrix.apps` entry routing to it.
/// Anything without a PushRelay equivalent is kept as a comment next to where it would go, so nothing is dropped
/// silently. The output is YAML text ready to merge into a PushRelay config.
enum SygnalConfigImport {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func convert(yaml: String, source: String = "sygnal.yaml") throws -> String {
        let root: JSONValue
        do {
            root = try YAMLTree.parse(yaml, source: source)
        } catch {
            throw Failure(description: "cannot read \(source): \(error)")
        }
        guard case .object(let top) = root, case .object(let apps)? = top["apps"], !apps.isEmpty else {
            throw Failure(description: "\(source) has no 'apps:' mapping to convert")
        }
        var providers: [String] = []
        var matrixApps: [String] = []
        var notes: [String] = []
        var usedNames: Set<String> = []
        for appID in apps.keys.sorted() {
            guard case .object(let app) = apps[appID]! else {
                notes.append("apps.\(appID) is not a mapping; skipped")
                continue
            }
            var name = providerName(appID)
            while usedNames.contains(name) { name += "_" }
            usedNames.insert(name)
            let type = app["type"]?.stringValue ?? ""
            var p: [String] = []
            var m: [String] = ["provider: \(q(name))"]
            var comments: [String] = []
            var handled: Set<String> = ["type"]
            func take(_ key: String) -> JSONValue? {
                handled.insert(key)
                guard let v = app[key], v != .null else { return nil }
                return v
            }
            switch type {
            case "apns":
                p.append("type: apns")
                if let cert = take("certfile") {
                    p.append("cert_file: \(q(cert.fcmDataString))")
                    p.append("cert_key_file: \(q(cert.fcmDataString))   # Sygnal's certfile holds both the certificate and its key")
                    comments.append("certificate authentication: APNs also needs 'topic' (the app's bundle id); set it below")
                    p.append("topic: \(q(take("topic")?.fcmDataString ?? "CHANGE-ME.bundle.id"))")
                } else {
                    if let v = take("keyfile") { p.append("key_file: \(q(v.fcmDataString))") }
                    if let v = take("key_id") { p.append("key_id: \(q(v.fcmDataString))") }
                    if let v = take("team_id") { p.append("team_id: \(q(v.fcmDataString))") }
                    if let v = take("topic") { p.append("topic: \(q(v.fcmDataString))") }
                }
                switch take("platform")?.fcmDataString.lowercased() {
                case "sandbox"?: p.append("environment: sandbox")
                case nil, "production"?, "prod"?: p.append("environment: production")
                case let other?:
                    p.append("environment: production")
                    comments.append("platform '\(other)' is not production or sandbox; production assumed")
                }
                if let v = take("push_type") { m.append("push_type: \(q(v.fcmDataString))") }
                if let v = take("convert_device_token_to_hex") { m.append("convert_device_token_to_hex: \(v.isTruthy)") }
                if let v = take("send_badge_counts") { m.append("send_badge_counts: \(v.isTruthy)") }
            case "gcm":
                p.append("type: fcm")
                let api = take("api_version")?.fcmDataString ?? "legacy"
                if api != "v1" {
                    comments.append(
                        "api_version '\(api)': Google shut the legacy FCM API down; PushRelay speaks FCM HTTP v1 and needs a service_account_file"
                    )
                }
                if take("api_key") != nil { comments.append("api_key (legacy API) is not used; give service_account_file instead") }
                p.append("service_account_file: \(q(take("service_account_file")?.fcmDataString ?? "CHANGE-ME/service-account.json"))")
                if let v = take("project_id") { p.append("project_id: \(q(v.fcmDataString))") }
                if let v = take("max_connections") { p.append("max_connections: \(v.fcmDataString)") }
                if let v = take("fcm_options") { m.append("fcm_options: \(v.jsonString())") }
                if let v = take("send_badge_counts") { m.append("send_badge_counts: \(v.isTruthy)") }
            case "webpush":
                p.append("type: webpush")
                p.append("vapid_private_key: \(q(take("vapid_private_key")?.fcmDataString ?? "CHANGE-ME/vapid_private_key.pem"))")
                p.append("vapid_contact_email: \(q(take("vapid_contact_email")?.fcmDataString ?? "CHANGE-ME@example.org"))")
                if case .array(let list)? = take("allowed_endpoints") {
                    p.append("allowed_endpoints: [\(list.map { q($0.fcmDataString) }.joined(separator: ", "))]")
                } else {
                    comments.append(
                        "no allowed_endpoints in Sygnal: PushRelay defaults to the browsers' push services (fcm.googleapis.com, updates.push.services.mozilla.com, *.push.apple.com, *.notify.windows.com)"
                    )
                }
                if let v = take("ttl") { p.append("ttl: \(v.fcmDataString)") }
                if let v = take("max_connections") { p.append("max_connections: \(v.fcmDataString)") }
            default:
                notes.append("apps.\(appID): type '\(type)' (a custom pushkin) has no PushRelay equivalent; skipped")
                usedNames.remove(name)
                continue
            }
            if take("inflight_request_limit") != nil {
                comments.append("inflight_request_limit: PushRelay bounds deliveries in flight per provider with delivery.max_in_flight")
            }
            for key in app.keys.sorted() where !handled.contains(key) {
                comments.append("\(key): not understood by PushRelay; dropped")
            }
            providers.append("  \(q(name)):\n" + comments.map { "    # \($0)\n" }.joined() + p.map { "    \($0)\n" }.joined())
            matrixApps.append("    \(q(appID)):\n" + m.map { "      \($0)\n" }.joined())
        }
        var top2Notes: [String] = []
        for key in top.keys.sorted() where key != "apps" {
            switch key {
            case "http": top2Notes.append("http: set http.host and http.port in PushRelay (Sygnal's default port is 5000, PushRelay's 8080)")
            case "proxy": top2Notes.append("proxy: outbound HTTP proxies are not supported")
            case "metrics", "log", "database", "db": top2Notes.append("\(key): not converted (PushRelay has its own log.level and storage settings)")
            default: top2Notes.append("\(key): not converted")
            }
        }
        var out = "# Converted from \(source) by `pushrelay import-sygnal-config`. Review the CHANGE-ME values and comments.\n"
        for n in notes + top2Notes { out += "# NOTE: \(n)\n" }
        out += "providers:\n" + providers.joined()
        out += "# Home Assistant routes: none, this config serves Matrix only (add entries to also serve Home Assistant).\napps: []\n"
        out += "matrix:\n  apps:\n" + matrixApps.joined()
        return out
    }

    /// A provider name from an app id: letters, digits and `_`.
    static func providerName(_ appID: String) -> String {
        let s = String(appID.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
        return s.isEmpty ? "matrix" : s
    }

    /// A YAML double-quoted scalar (JSON string syntax is valid YAML).
    static func q(_ s: String) -> String { JSONValue.string(s).jsonString() }
}
