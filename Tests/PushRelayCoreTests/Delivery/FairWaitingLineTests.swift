import PushRelayCore
import Testing

/// The in-flight bound's waiting line alone, in simulated time: places, turns between clients, waits that end.
///
/// ThreadSanitizer: the line's places, taken and given back from many tasks.
@Suite struct FairWaitingLineTests {
    let t0 = ContinuousClock.now

    /// A line whose waiters are their own names, in a box so that `#expect` can call its mutating members.
    final class Line {
        var line: FairWaitingLine<String>
        init(_ line: FairWaitingLine<String>) { self.line = line }
        var inFlight: Int { line.inFlight }
        var waiting: Int { line.waiting }
        func acquire(client: String, id: UInt64, now: ContinuousClock.Instant, waiter: String) -> Bool {
            line.acquire(client: client, id: id, now: now, waiter: waiter)
        }
        func tryAcquire() -> Bool { line.tryAcquire() }
        func release() -> String? { line.release() }
        func remove(id: UInt64) -> String? { line.remove(id: id) }
        func expire(now: ContinuousClock.Instant) -> [String] { line.expire(now: now) }
        func nextDeadline() -> ContinuousClock.Instant? { line.nextDeadline() }
    }

    func line(limit: Int, maxWait: Duration = .seconds(4)) -> Line {
        Line(FairWaitingLine(limit: limit, maxWait: maxWait))
    }

    @Test func placesAreTakenUpToTheLimitThenDispatchesWait() {
        let l = line(limit: 2)
        #expect(l.acquire(client: "a", id: 1, now: t0, waiter: "a1"))
        #expect(l.tryAcquire())
        #expect(!l.tryAcquire(), "both places are held")
        #expect(!l.acquire(client: "a", id: 3, now: t0, waiter: "a3"))
        #expect(l.inFlight == 2 && l.waiting == 1)
        #expect(l.release() == "a3", "the freed place goes to the waiter")
        #expect(l.inFlight == 2 && l.waiting == 0)
        #expect(l.release() == nil)
        #expect(l.release() == nil)
        #expect(l.inFlight == 0)
        #expect(l.tryAcquire())
    }

    @Test func oneClientsLineIsFirstComeFirstServed() {
        let l = line(limit: 1)
        #expect(l.tryAcquire())
        for i in 1...4 { #expect(!l.acquire(client: "a", id: UInt64(i), now: t0, waiter: "a\(i)")) }
        #expect([l.release(), l.release(), l.release(), l.release()] == ["a1", "a2", "a3", "a4"])
        #expect(l.release() == nil && l.inFlight == 0)
    }

    @Test func clientsTakeTurnsHoweverManyOneSends() {
        let l = line(limit: 1)
        #expect(l.tryAcquire())
        // A greedy client queues 100 requests before two others arrive with one each.
        for i in 1...100 { #expect(!l.acquire(client: "greedy", id: UInt64(i), now: t0, waiter: "g\(i)")) }
        #expect(!l.acquire(client: "b", id: 101, now: t0, waiter: "b1"))
        #expect(!l.acquire(client: "c", id: 102, now: t0, waiter: "c1"))
        // Each of them waits behind one of the greedy client's requests at most.
        #expect([l.release(), l.release(), l.release(), l.release()] == ["g1", "b1", "c1", "g2"])
        #expect(!l.acquire(client: "b", id: 103, now: t0, waiter: "b2"))
        #expect([l.release(), l.release(), l.release()] == ["b2", "g3", "g4"], "after g2, it is b's turn")
        #expect(l.waiting == 96)
    }

    @Test func waitsEndAtMaxWaitInArrivalOrder() {
        let l = line(limit: 1, maxWait: .seconds(4))
        #expect(l.tryAcquire())
        #expect(!l.acquire(client: "a", id: 1, now: t0, waiter: "a1"))
        #expect(!l.acquire(client: "b", id: 2, now: t0 + .seconds(1), waiter: "b1"))
        #expect(!l.acquire(client: "a", id: 3, now: t0 + .seconds(2), waiter: "a2"))
        #expect(l.nextDeadline() == t0 + .seconds(4))
        #expect(l.expire(now: t0 + .milliseconds(3999)).isEmpty)
        #expect(l.expire(now: t0 + .seconds(5)) == ["a1", "b1"])
        #expect(l.nextDeadline() == t0 + .seconds(6))
        #expect(l.release() == "a2", "an expired waiter is not served")
        #expect(l.expire(now: t0 + .seconds(60)).isEmpty)
        #expect(l.nextDeadline() == nil)
        #expect(l.inFlight == 1)
    }

    @Test func aRemovedWaiterIsNeitherServedNorExpired() {
        let l = line(limit: 1)
        #expect(l.tryAcquire())
        #expect(!l.acquire(client: "a", id: 1, now: t0, waiter: "a1"))
        #expect(!l.acquire(client: "b", id: 2, now: t0, waiter: "b1"))
        #expect(l.remove(id: 1) == "a1")
        #expect(l.remove(id: 1) == nil, "only once")
        #expect(l.waiting == 1)
        #expect(l.release() == "b1")
        #expect(l.expire(now: t0 + .seconds(60)).isEmpty)
        #expect(l.release() == nil && l.inFlight == 0)
    }

    @Test func aZeroWaitRefusesAtTheNextExpiry() {
        let l = line(limit: 1, maxWait: .zero)
        #expect(l.tryAcquire())
        #expect(!l.acquire(client: "a", id: 1, now: t0, waiter: "a1"))
        #expect(l.expire(now: t0) == ["a1"])
        #expect(l.waiting == 0)
    }

    @Test func manyClientsAndWaitersKeepTheBooksStraight() {
        // Random arrivals, releases, removals and expiries: every waiter leaves exactly once, and the places held
        // never exceed the limit.
        var generator = SeededRandom(seed: 7)
        let l = line(limit: 3, maxWait: .seconds(2))
        var left: Set<String> = []
        var queued: Set<String> = []
        var now = t0
        for id in UInt64(1)...2_000 {
            now = now + .milliseconds(Int64(generator.next() % 20))
            let name = "w\(id)"
            switch generator.next() % 4 {
            case 0, 1:
                if !l.acquire(client: "c\(generator.next() % 5)", id: id, now: now, waiter: name) { queued.insert(name) }
            case 2:
                if l.inFlight > 0, let w = l.release() { #expect(left.insert(w).inserted) }
            default:
                if let w = l.remove(id: generator.next() % id + 1) { #expect(left.insert(w).inserted) }
            }
            for w in l.expire(now: now) { #expect(left.insert(w).inserted) }
            #expect(l.inFlight <= 3)
        }
        for w in l.expire(now: now + .seconds(10)) { #expect(left.insert(w).inserted) }
        #expect(left == queued, "every queued waiter left once, and nobody else")
        #expect(l.waiting == 0)
    }
}
