import PushRelayCore
import PushRelayStore

/// Keeps the writes to one row in the order they were asked for, although each runs on whichever pooled connection
/// is free: a channel message's save, queued without waiting, must not be overtaken by its confirm's delete.
final class KeyedWriteOrder: Sendable {
    private struct Tail {
        var serial: UInt64
        var done: WriteTicket<Void>
    }

    private let tails = Locked<(serial: UInt64, byKey: [String: Tail])>((0, [:]))

    /// Queues `work` behind every earlier write for `key` now, and returns a ticket for its result.
    func submit<T: Sendable>(key: String, _ work: @escaping @Sendable () async throws -> T) -> WriteTicket<T> {
        let ticket = WriteTicket<T>()
        let done = WriteTicket<Void>()
        let (serial, previous) = tails.withLock { t -> (UInt64, WriteTicket<Void>?) in
            t.serial += 1
            let previous = t.byKey[key]?.done
            t.byKey[key] = Tail(serial: t.serial, done: done)
            return (t.serial, previous)
        }
        Task {
            if let previous { _ = try? await previous.value }
            let result: Result<T, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            tails.withLock { t in
                if t.byKey[key]?.serial == serial { t.byKey[key] = nil }
            }
            done.complete(.success(()))
            ticket.complete(result)
        }
        return ticket
    }

    /// Runs `work` behind every earlier write for `key` and returns its result.
    func run<T: Sendable>(key: String, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await submit(key: key, work).value
    }
}
