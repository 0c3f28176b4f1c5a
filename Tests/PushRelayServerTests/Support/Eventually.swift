import Foundation
import Testing

/// Polls until `condition` holds, or records a failure (at the caller) after `seconds`: generous, because a CI machine
/// running the whole suite in parallel on two cores can stall a test for seconds (a test that holds at once pays nothing).
func eventually(
    _ what: String,
    seconds: Double = 30,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    Issue.record("timed out waiting for: \(what)", sourceLocation: sourceLocation)
}
