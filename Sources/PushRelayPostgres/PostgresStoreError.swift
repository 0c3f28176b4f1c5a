import Foundation
import PushRelayStore

/// What went wrong with PostgreSQL, in one line without secrets or statement arguments.
public enum PostgresStoreError: Error, CustomStringConvertible, Sendable, Equatable {
    /// `storage.postgres.url` is not usable.
    case invalidURL(String)
    /// No connection could be made (refused, unreachable, timed out, TLS refused).
    case cannotConnect(target: String, reason: String)
    /// The server refused the user name or password.
    case authenticationFailed(target: String, reason: String)
    /// A request found no working connection: PostgreSQL is down, unreachable, or a connection broke mid-request.
    case unavailable(String)
    /// PostgreSQL answered a statement with an error.
    case server(sqlState: String, message: String)

    public var description: String {
        switch self {
        case .invalidURL(let why): return "invalid PostgreSQL URL: \(why)"
        case .cannotConnect(let target, let reason): return "cannot connect to PostgreSQL at \(target): \(reason)"
        case .authenticationFailed(let target, let reason): return "PostgreSQL at \(target) refused the login: \(reason)"
        case .unavailable(let why): return "PostgreSQL unavailable: \(why)"
        case .server(let state, let message): return "PostgreSQL error \(state): \(message)"
        }
    }

    /// Whether this is a storage fault (the database cannot take writes now) rather than a refusal by a rule
    /// (a constraint, a bad argument): what `StorageHealth` follows.
    public var isFault: Bool {
        switch self {
        case .cannotConnect, .authenticationFailed, .unavailable: return true
        case .invalidURL: return false
        case .server(let state, _):
            // 08 connection exception, 53 insufficient resources (disk full, out of memory, too many connections),
            // 57 operator intervention (shutdown, cannot connect now), 58 system error (I/O), XX internal error,
            // 25006 read-only transaction (a standby, or default_transaction_read_only).
            return ["08", "53", "57", "58", "XX"].contains(String(state.prefix(2))) || state == "25006"
        }
    }
}
extension PostgresStoreError: StorageFailure {}
