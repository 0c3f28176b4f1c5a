import Testing

@testable import PushRelayCore

/// `FIFOQueue`: first in, first out, across the compactions of its storage.
@Suite struct FIFOQueueTests {
    @Test func elementsComeOutInTheOrderTheyWentIn() {
        var queue = FIFOQueue<Int>()
        #expect(queue.isEmpty)
        #expect(queue.popFirst() == nil)
        for i in 0..<3 { queue.append(i) }
        #expect(queue.count == 3)
        #expect(queue.first == 0)
        #expect(queue.popFirst() == 0)
        queue.append(3)
        #expect([queue.popFirst(), queue.popFirst(), queue.popFirst()] == [1, 2, 3])
        #expect(queue.isEmpty)
        #expect(queue.first == nil)
    }

    /// A consumer that stays a little behind its producer for long: the taken prefix is dropped now and then (past 64
    /// taken), and nothing is lost or reordered by it.
    @Test func aConsumerThatNeverCatchesUpKeepsTheOrder() {
        var queue = FIFOQueue<Int>()
        var next = 0
        var expected = 0
        for _ in 0..<1_000 {
            for _ in 0..<3 {
                queue.append(next)
                next += 1
            }
            for _ in 0..<2 {
                #expect(queue.popFirst() == expected)
                expected += 1
            }
        }
        #expect(queue.count == next - expected)
        while let value = queue.popFirst() {
            #expect(value == expected)
            expected += 1
        }
        #expect(expected == next)
    }
}
