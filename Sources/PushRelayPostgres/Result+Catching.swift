extension Result where Failure == any Error {
    /// The result of an async throwing operation.
    init(catching operation: () async throws -> Success) async {
        do { self = .success(try await operation()) } catch { self = .failure(error) }
    }
}
