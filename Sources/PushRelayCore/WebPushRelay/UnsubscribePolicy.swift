import Foundation

/// Whether PushRelay may send the DELETE a WebPush sender asked for in `Unsubscribe-URL` when a token is dead.
///
/// Only `http`/`https` URLs whose host is listed (exactly, case-insensitively) in `relay.unsubscribe_allowed_hosts`
/// qualify: the list is empty by default, so PushRelay never sends requests to hosts a sender chose.
public enum UnsubscribePolicy {
    public static func allows(_ url: String, allowedHosts: [String]) -> Bool {
        guard !allowedHosts.isEmpty, let u = URL(string: url), let scheme = u.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = u.host?.lowercased(), !host.isEmpty,
            u.user == nil, u.password == nil
        else { return false }
        return allowedHosts.contains { $0.lowercased() == host }
    }
}
