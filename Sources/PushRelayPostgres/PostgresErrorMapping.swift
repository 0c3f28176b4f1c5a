import Foundation
import NIOCore
import PostgresNIO
import PushRelayStore

/// Turns what postgres-nio throws into a `PostgresStoreError` (or `StorageError.closed` once the pool is closed, as
/// every engine says it): one line, no statement text or arguments (a `PSQLError`'s debug description holds the query
/// and its binds, push tokens included).
enum PostgresErrorMapping {
    static func map(_ error: any Error, target: String) -> any Error {
        switch error {
        case let e as PostgresStoreError: return e
        case StorageError.closed: return StorageError.closed
        case is CancellationError: return error
        case let e as PostgresTransactionError:
            // The closure's error first: BEGIN, COMMIT or ROLLBACK failing says less.
            if let inner = e.closureError ?? e.beginError ?? e.commitError ?? e.rollbackError { return map(inner, target: target) }
            return PostgresStoreError.unavailable("a transaction failed")
        case let e as PSQLError: return map(e, target: target)
        case let e as PostgresDecodingError:
            return PostgresStoreError.server(sqlState: "decode", message: "column '\(e.columnName)' is not a \(e.targetType)")
        default:
            return PostgresStoreError.unavailable(oneLine("\(error)"))
        }
    }

    private static func map(_ e: PSQLError, target: String) -> any Error {
        switch e.code {
        case .server:
            let state = e.serverInfo?[.sqlState] ?? "?????"
            let message = e.serverInfo?[.message] ?? "unknown server error"
            return PostgresStoreError.server(sqlState: state, message: oneLine(message))
        case .connectionError:
            return PostgresStoreError.unavailable("cannot connect to \(target): \(underlying(e))")
        case .serverClosedConnection, .uncleanShutdown:
            return PostgresStoreError.unavailable("the connection to \(target) was lost")
        case .clientClosedConnection, .poolClosed:
            return StorageError.closed
        case .queryCancelled:
            return PostgresStoreError.unavailable("the request was cancelled")
        case .sslUnsupported:
            return PostgresStoreError.unavailable("\(target) does not offer TLS (storage.postgres.tls: require)")
        case .failedToAddSSLHandler, .receivedUnencryptedDataAfterSSLRequest:
            return PostgresStoreError.unavailable("TLS with \(target) failed: \(underlying(e))")
        case .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError:
            return PostgresStoreError.unavailable("\(target) asks for a login this client cannot give (\(e.code))")
        default:
            return PostgresStoreError.unavailable("\(e.code)")
        }
    }

    /// A connection attempt's failure, for opening: refused, unreachable, a bad password, a missing database.
    static func connectFailure(_ error: any Error, target: String) -> PostgresStoreError {
        if let e = error as? PSQLError {
            switch e.code {
            case .server:
                let state = e.serverInfo?[.sqlState] ?? ""
                let message = oneLine(e.serverInfo?[.message] ?? "refused")
                // 28000 invalid authorization, 28P01 invalid password.
                if state.hasPrefix("28") { return .authenticationFailed(target: target, reason: message) }
                return .cannotConnect(target: target, reason: message)
            case .connectionError, .failedToAddSSLHandler:
                return .cannotConnect(target: target, reason: underlying(e))
            case .sslUnsupported:
                return .cannotConnect(target: target, reason: "the server does not offer TLS (storage.postgres.tls: require)")
            case .authMechanismRequiresPassword:
                return .authenticationFailed(target: target, reason: "the server asks for a password and the URL has none")
            default:
                return .cannotConnect(target: target, reason: "\(e.code)")
            }
        }
        if let e = error as? PostgresStoreError { return e }
        return .cannotConnect(target: target, reason: oneLine("\(error)"))
    }

    private static func underlying(_ e: PSQLError) -> String {
        guard let u = e.underlying else { return "\(e.code)" }
        if let c = u as? NIOConnectionError {
            if let first = c.connectionErrors.first { return oneLine("\(first.error)") }
            if let dns = c.dnsAError ?? c.dnsAAAAError { return "cannot resolve \(c.host): \(oneLine("\(dns)"))" }
            return "cannot resolve \(c.host)"
        }
        if let c = u as? ChannelError, case .connectTimeout(let t) = c {
            return "no answer within \(t.nanoseconds / 1_000_000_000) s"
        }
        return oneLine("\(u)")
    }

    static func oneLine(_ s: String) -> String {
        s.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
