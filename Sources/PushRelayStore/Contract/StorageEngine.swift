/// The engine behind a `Storage`: its lifecycle and the figures `/metrics` shows.
public protocol StorageEngine: Sendable {
    /// Returns once every write queued before the call is durable.
    func flush() async throws
    /// Makes every queued write durable, then closes. Call once, after the last request finished.
    func flushAndClose() async throws
    /// Counters for `/metrics`: name (`pushrelay_…`), help text, current value.
    func statistics() -> [(name: String, help: String, value: Double)]
}
