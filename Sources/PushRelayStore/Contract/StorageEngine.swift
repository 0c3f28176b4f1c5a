/// The engine behind a `Storage`: its lifecycle and the figures `/metrics` shows.
public protocol StorageEngine: Sendable {
    /// Returns once every write queued before the call is durable.
    func flush() async throws
    /// Makes every queued write durable, then closes. Call once, after the last request finished.
    func flushAndClose() async throws
    /// The engine's current view of its writes (`StorageHealth`); cheap enough to read on every `/health`.
    var health: StorageHealth { get }
    /// Writes and removes a probe row now, updates `health` with the result and returns it. The server calls it
    /// while `health` is failing, so that the fault's end is noticed even when no request comes.
    @discardableResult
    func probe() async -> StorageHealth
    /// The schema migrations applied to the database, oldest first (`pushrelay migrate`).
    func appliedMigrations() async throws -> [(version: Int, name: String, appliedAt: String)]
    /// Counters for `/metrics`: name (`pushrelay_…`), help text, current value.
    func statistics() -> [(name: String, help: String, value: Double)]
}
