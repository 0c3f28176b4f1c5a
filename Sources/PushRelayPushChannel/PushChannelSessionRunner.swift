import Logging
import NIOCore
import NIOWebSocket
import PushRelayCore
import Synchronization

/// Handles one connection's messages in order, in a task that exists only while messages wait; then, once the socket
/// is gone, the disconnect (its unconfirmed messages fall back).
///
/// Backpressure: past `pauseAt` waiting messages the socket stops being read (NIO `autoRead` off), and reading resumes
/// once the backlog is down to `resumeAt`, so a client that sends faster than its messages are handled costs bounded
/// memory.
final class PushChannelSessionRunner: Sendable {
    static let pauseAt = 32
    static let resumeAt = 8

    enum Input: Sendable {
        case text(String)
        case binary
    }

    private enum Step {
        case message(Input, PushChannelEndpoint.Session)
        case disconnect
        case idle
    }

    private struct State {
        var inbox: [Input] = []
        var session: PushChannelEndpoint.Session
        var running = false
        var socketGone = false
        var disconnected = false
        var readingPaused = false
    }

    let endpoint: PushChannelEndpoint
    let connection: PushChannelConnection
    private let onDisconnected: @Sendable () -> Void
    /// Turns reading from the socket off (false) or on (true).
    private let setReading: @Sendable (Bool) -> Void
    private let state: Locked<State>

    init(
        endpoint: PushChannelEndpoint,
        connection: PushChannelConnection,
        setReading: @escaping @Sendable (Bool) -> Void,
        onDisconnected: @escaping @Sendable () -> Void
    ) {
        self.endpoint = endpoint
        self.connection = connection
        self.setReading = setReading
        self.onDisconnected = onDisconnected
        state = Locked(State(session: .init(connection: connection)))
    }

    func received(_ input: Input) {
        let (start, pause) = state.withLock { s -> (Bool, Bool) in
            guard !s.socketGone else { return (false, false) }
            s.inbox.append(input)
            let pause = !s.readingPaused && s.inbox.count >= Self.pauseAt
            if pause { s.readingPaused = true }
            return (claim(&s), pause)
        }
        if pause { setReading(false) }
        if start { Task { await run() } }
    }

    func socketClosed() {
        let start = state.withLock { s -> Bool in
            s.socketGone = true
            return claim(&s)
        }
        if start { Task { await run() } }
    }

    private func claim(_ s: inout State) -> Bool {
        if s.running { return false }
        s.running = true
        return true
    }

    private func run() async {
        while true {
            let (step, resume) = state.withLock { s -> (Step, Bool) in
                var resume = false
                if s.readingPaused && (s.inbox.count <= Self.resumeAt || connection.isClosed) {
                    s.readingPaused = false
                    resume = true
                }
                if !s.inbox.isEmpty && !connection.isClosed { return (.message(s.inbox.removeFirst(), s.session), resume) }
                s.inbox.removeAll()
                if s.socketGone && !s.disconnected {
                    s.disconnected = true
                    return (.disconnect, resume)
                }
                s.running = false
                return (.idle, resume)
            }
            if resume { setReading(true) }
            switch step {
            case .message(let input, var session):
                await connection.waitForRoom()
                switch input {
                case .text(let text): await endpoint.handle(text, session: &session)
                case .binary: connection.send(PushChannelWire.error(id: nil, .invalidFormat, "Only JSON text messages are accepted."))
                }
                state.withLock { $0.session = session }
            case .disconnect:
                await endpoint.closed(connection)
                onDisconnected()
            case .idle:
                return
            }
        }
    }
}
