import Testing

@testable import PushRelayCore

/// `FirstResult`: the first offer wins, whether it comes before or after the waiter starts; later offers are ignored
/// and the settled callbacks run once.
///
/// ThreadSanitizer: offers racing the waiter and each other.
@Suite struct FirstResultTests {
    @Test func theFirstOfferWinsAndLaterOnesAreIgnored() async {
        let first = FirstResult<Int>()
        let waiting = Task { await withCheckedContinuation { first.start($0) } }
        #expect(first.offer(1))
        #expect(!first.offer(2))
        #expect(await waiting.value == 1)
    }

    @Test func anOfferMadeBeforeTheWaiterStartsIsDeliveredWhenItDoes() async {
        let first = FirstResult<String>()
        #expect(first.offer("early"))
        #expect(!first.offer("late"))
        let value = await withCheckedContinuation { first.start($0) }
        #expect(value == "early")
    }

    @Test func settledCallbacksRunOnceWhetherAddedBeforeOrAfter() {
        let first = FirstResult<Int>()
        let runs = Locked(0)
        first.onSettled { runs.withLock { $0 += 1 } }
        #expect(runs.withLock { $0 } == 0)
        first.offer(1)
        first.offer(2)
        #expect(runs.withLock { $0 } == 1)
        first.onSettled { runs.withLock { $0 += 10 } }
        #expect(runs.withLock { $0 } == 11)
    }

    @Test func concurrentOffersHaveExactlyOneWinner() async {
        let first = FirstResult<Int>()
        let wins = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<64 { group.addTask { first.offer(i) } }
            var wins = 0
            for await won in group where won { wins += 1 }
            return wins
        }
        #expect(wins == 1)
        let value = await withCheckedContinuation { first.start($0) }
        #expect((0..<64).contains(value))
    }
}
