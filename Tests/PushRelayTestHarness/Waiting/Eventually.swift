import Foundation
import Testing

/// Polls until `condition` holds, or records a failure (at the caller) after `seconds`: generous, because a CI machine
/// running the whole suite in parallel on two cores can stall a test for seconds (a test that holds at once pays nothing).
public func eventually(
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

/// Checks that `condition` keeps holding for the whole of `duration` (something that must not happen: a second
/// delivery, a request to a forbidden address), polling it; records a failure (at the caller) as soon as it breaks.
/// The window is the time the server would need to do the forbidden thing (a confirm timeout, a delivery round trip).
public func consistently(
    _ what: String,
    for duration: Duration,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + duration
    repeat {
        guard try await condition() else {
            Issue.record("stopped holding: \(what)", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(20))
    } while ContinuousClock.now < deadline
    if !(try await condition()) { Issue.record("stopped holding: \(what)", sourceLocation: sourceLocation) }
}
