import PushRelayWebPushRelay
import Testing

@testable import PushRelayServer

/// The relay's `Unsubscribe-URL` DELETEs: a fixed number at a time, a bounded number waiting, the rest dropped.
@Suite struct UnsubscribeLineTests {
    @Test func deletesPastTheRunningBoundWaitAndPastTheWaitingBoundAreDropped() {
        var line = UnsubscribeLine.State(maxRunning: 2, maxWaiting: 2)
        #expect(line.submit("https://a/1") == .run)
        #expect(line.submit("https://a/2") == .run)
        #expect(line.submit("https://a/3") == .queued)
        #expect(line.submit("https://a/4") == .queued)
        #expect(line.submit("https://a/5") == .dropped)
        #expect(line.submit("https://a/6") == .dropped)
        #expect(line.running == 2 && line.waiting.count == 2 && line.dropped == 2)
        // One ends: the oldest waiting one runs in its place, in order.
        #expect(line.finished() == "https://a/3")
        #expect(line.finished() == "https://a/4")
        #expect(line.running == 2 && line.waiting.isEmpty)
        #expect(line.finished() == nil)
        #expect(line.finished() == nil)
        #expect(line.running == 0)
        #expect(line.submit("https://a/7") == .run, "room again")
    }

    @Test func theSharedLineCountsWhatItDropped() {
        let line = UnsubscribeLine(maxRunning: 1, maxWaiting: 0)
        #expect(line.submit("https://a/1") == .run)
        for _ in 0..<5 { #expect(line.submit("https://a/x") == .dropped) }
        #expect(line.figures.running == 1 && line.figures.waiting == 0 && line.figures.dropped == 5)
        #expect(line.finished() == nil)
        #expect(line.figures.running == 0)
    }
}
