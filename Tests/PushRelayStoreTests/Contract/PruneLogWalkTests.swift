import PushRelayStore
import Testing

@Suite struct PruneLogWalkTests {
    static func rows(_ ids: ClosedRange<Int64>, expired: Set<Int64> = []) -> [(id: Int64, expired: Bool)] {
        ids.map { (id: $0, expired: expired.contains($0)) }
    }

    @Test func aStepReadsOnPastNewerRowsUntilItHasItsLimit() {
        var walk = PruneLogWalk(cutoff: "2026-11-16")
        walk.begin()
        let window = Int64(PruneLogWalk.window)
        // A whole window of newer rows: read another.
        let r1 = walk.read(Self.rows(1...window), limit: 3)
        #expect(r1)
        #expect(walk.readFrom == window)
        // Expired rows further on: it stops at the third.
        let r2 = walk.read(Self.rows(window + 1...window + 10, expired: [window + 2, window + 4, window + 6, window + 8]), limit: 3)
        #expect(!r2)
        #expect(walk.found == [window + 2, window + 4, window + 6])
        let r3 = walk.take(room: 3)
        #expect(r3 == [window + 2, window + 4, window + 6])
        #expect(walk.after == window + 6 && !walk.finished)
        // The next step starts there and finds the fourth; the log ends.
        walk.begin()
        let r4 = walk.read(Self.rows(window + 7...window + 10, expired: [window + 8]), limit: 3)
        #expect(!r4)
        let r5 = walk.take(room: 3)
        #expect(r5 == [window + 8])
        #expect(walk.finished && walk.after == window + 10)
    }

    @Test func rowsWithoutRoomInTheStepAreFoundAgainNextStep() {
        var walk = PruneLogWalk(cutoff: "2026-11-16")
        walk.begin()
        let r6 = walk.read(Self.rows(1...5, expired: [2, 3, 4]), limit: 10)
        #expect(!r6)
        let r7 = walk.take(room: 1)
        #expect(r7 == [2])
        #expect(walk.after == 2 && !walk.finished)
        walk.begin()
        #expect(walk.readFrom == 2)
        let r8 = walk.read(Self.rows(3...5, expired: [3, 4]), limit: 10)
        #expect(!r8)
        let r9 = walk.take(room: 0)
        #expect(r9.isEmpty)
        #expect(walk.after == 2, "nothing taken: the walk stays before the rows it found")
    }
}
