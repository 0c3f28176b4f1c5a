/// What PostgreSQL's `text` can hold.
enum PostgresText {
    /// Whether every one of `values` fits in `text`: no NUL character (PostgreSQL refuses the whole statement
    /// otherwise). A nil value fits.
    static func canHold(_ values: String?...) -> Bool {
        values.allSatisfy { !($0?.utf8.contains(0) ?? false) }
    }
}
