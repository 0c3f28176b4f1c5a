import Synchronization

/// Whether a connection still takes new requests (a class, so the channel's handler can clear it from its event loop
/// while pools read it from anywhere).
final class UsableFlag: Sendable {
    let value = Atomic<Bool>(true)
}
