import Logging
import PushRelayCore
import PushRelayPushChannel
import PushRelayTestHarness
import Testing

@testable import PushRelayServer

/// A connection's outbound queue is bounded in bytes as well as in frames (`channel.outbound_buffer_bytes`).
@Suite struct PushChannelConnectionTests {
    /// A sink whose first write blocks until released: a reader that stopped reading.
    struct StalledSink {
        let sink: PushChannelConnection.Sink
        let started: AsyncStream<String>
        let release: AsyncStream<Void>.Continuation
        let written: Locked<[String]>
        let closes: Locked<[String]>
        let closeSoons: Locked<Int>

        init() {
            let (started, startedSignal) = AsyncStream.makeStream(of: String.self)
            let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
            let written = Locked<[String]>([])
            let closes = Locked<[String]>([])
            let closeSoons = Locked(0)
            let blocked = Locked(true)
            sink = PushChannelConnection.Sink(
                write: { text in
                    startedSignal.yield(text)
                    if blocked.withLock({ $0 }) {
                        for await _ in release { break }
                        blocked.withLock { $0 = false }
                    }
                    written.withLock { $0.append(text) }
                },
                close: { code, reason in closes.withLock { $0.append("\(code): \(reason)") } },
                closeSoon: { closeSoons.withLock { $0 += 1 } }
            )
            self.started = started
            self.release = releaseSignal
            self.written = written
            self.closes = closes
            self.closeSoons = closeSoons
        }
    }

    @Test func framesPastTheByteBoundOverflowCountingTheOneBeingWritten() async throws {
        let stalled = StalledSink()
        let connection = PushChannelConnection(peer: "test", bufferLimit: 256, byteLimit: 10_000, sink: stalled.sink, logger: Logger(label: "test"))
        let failures = Locked(0)
        let first = String(repeating: "1", count: 6_000)
        #expect(connection.send(first) { failures.withLock { $0 += 1 } })
        var it = stalled.started.makeAsyncIterator()
        #expect(await it.next() == first)
        // 6,000 bytes are being written: 4,000 more fit, one byte more does not, whatever the frame count.
        let fits = String(repeating: "a", count: 4_000)
        #expect(connection.send(fits) { failures.withLock { $0 += 1 } })
        #expect(!connection.send("b") { failures.withLock { $0 += 1 } })
        #expect(connection.isClosed && connection.closeReason == .overflow)
        #expect(failures.withLock { $0 } == 1)
        #expect(stalled.closeSoons.withLock { $0 } == 1, "the socket closes after a grace even if the writes never complete")
        stalled.release.yield()
        await connection.finished()
        #expect(stalled.written.withLock { $0 } == [first, fits])
        #expect(stalled.closes.withLock { $0 }.first?.contains("outbound buffer full") == true)
    }

    @Test func aSingleFrameOverTheByteBoundGoesToAnEmptyQueueAndTheBytesAreGivenBack() async throws {
        let written = Locked<[Int]>([])
        let connection = PushChannelConnection(
            peer: "test",
            bufferLimit: 256,
            byteLimit: 4_096,
            sink: .init(write: { text in written.withLock { $0.append(text.utf8.count) } }, close: { _, _ in }),
            logger: Logger(label: "test")
        )
        #expect(connection.send(String(repeating: "x", count: 5_000)))
        try await eventually("the large frame is written") { written.withLock { $0 } == [5_000] }
        // Written frames no longer count: many frames that fit one at a time all go out.
        for i in 0..<20 {
            #expect(connection.send(String(repeating: "y", count: 3_000)), "frame \(i)")
            try await eventually("frame \(i) is written") { written.withLock { $0.count } == i + 2 }
        }
        #expect(!connection.isClosed)
    }

    @Test func aConnectionTurnedAwayClosesItsSocketAfterAGraceWhateverIsPending() async throws {
        let stalled = StalledSink()
        let connection = PushChannelConnection(peer: "test", bufferLimit: 256, sink: stalled.sink, logger: Logger(label: "test"))
        #expect(connection.send("auth_required"))
        var it = stalled.started.makeAsyncIterator()
        #expect(await it.next() == "auth_required")
        // The auth timeout: a last frame, then the close, while the first write never completes.
        connection.send("auth_invalid")
        connection.markClosed(.authFailed)
        connection.markClosed(.authFailed)
        #expect(stalled.closeSoons.withLock { $0 } == 1)
        // A shutdown keeps its own limit; a client that went away needs no grace.
        let otherSink = StalledSink()
        for reason in [PushChannelConnection.CloseReason.serverShutdown, .clientGone] {
            PushChannelConnection(peer: "test", bufferLimit: 256, sink: otherSink.sink, logger: Logger(label: "test")).markClosed(reason)
        }
        #expect(otherSink.closeSoons.withLock { $0 } == 0)
        stalled.release.yield()
        await connection.finished()
        #expect(stalled.written.withLock { $0 } == ["auth_required", "auth_invalid"])
    }
}
