import GRDB
import GRDBSQLite
import PushRelayStore

/// One of GRDB's cached statements driven through SQLite's C API, for the few statements every notification runs on
/// the writer. GRDB's `execute(arguments:)` and `Row.fetchOne` box each argument and value as an existential and
/// allocate a row; on the notify path that was a measurable share of the writer's time per request. The statement is
/// left reset, as GRDB expects of its cache.
struct RawStatement: ~Copyable {
    private let db: Database
    private let handle: OpaquePointer
    private var index: Int32 = 0

    /// SQLite copies bound text (`SQLITE_TRANSIENT`), so the Swift strings need not outlive the call.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ db: Database, sql: String) throws {
        self.db = db
        self.handle = try db.cachedStatement(sql: sql).sqliteStatement
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds the next parameter (parameters are bound in order, from 1). The UTF-8 bytes go over with their length:
    /// passing the `String` as a C string made a NUL-terminated copy of every short one and had SQLite `strlen` it.
    mutating func bind(_ value: String?) {
        index += 1
        if var value {
            value.withUTF8 { utf8 in
                if let base = utf8.baseAddress {
                    _ = base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                        sqlite3_bind_text(handle, index, $0, Int32(utf8.count), Self.transient)
                    }
                } else {
                    _ = sqlite3_bind_text(handle, index, "", 0, Self.transient)
                }
            }
        } else {
            sqlite3_bind_null(handle, index)
        }
    }

    mutating func bind(_ value: Int) {
        index += 1
        sqlite3_bind_int64(handle, index, Int64(value))
    }

    mutating func bind(_ value: Bool) {
        bind(value ? 1 : 0)
    }

    /// Runs a statement that returns no row.
    consuming func execute() throws {
        defer { sqlite3_reset(handle) }
        let rc = sqlite3_step(handle)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw error(rc) }
    }

    /// The columns of the current row (0-based), valid only inside `firstRow`'s closure.
    struct Columns {
        fileprivate let handle: OpaquePointer

        func int(_ column: Int32) -> Int? {
            sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : Int(sqlite3_column_int64(handle, column))
        }

        func text(_ column: Int32) -> String? {
            guard sqlite3_column_type(handle, column) != SQLITE_NULL, let p = sqlite3_column_text(handle, column) else { return nil }
            return String(cString: p)
        }
    }

    /// Runs a statement and reads its first row (nil if none) with `read`.
    consuming func firstRow<T>(_ read: (Columns) -> T) throws -> T? {
        defer { sqlite3_reset(handle) }
        let rc = sqlite3_step(handle)
        if rc == SQLITE_DONE { return nil }
        guard rc == SQLITE_ROW else { throw error(rc) }
        return read(Columns(handle: handle))
    }

    private func error(_ rc: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: rc), message: db.sqliteConnection.map { String(cString: sqlite3_errmsg($0)) })
    }
}
