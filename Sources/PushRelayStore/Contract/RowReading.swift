/// The one check every engine's reader puts a stored row through: each typed column is read with `column`, which
/// throws `StorageError.unreadableRow` naming the table, the row, the column and the value when the value is one no
/// build of PushRelay writes there. A reader never guesses a value in its place.
struct RowReading {
    var table: String
    var id: String

    /// The typed value `read` makes of `value`, or `StorageError.unreadableRow` when it makes none.
    func column<T>(_ column: String, _ value: String, _ read: (String) -> T?) throws(StorageError) -> T {
        guard let typed = read(value) else { throw .unreadableRow(table: table, id: id, column: column, value: value) }
        return typed
    }
}
