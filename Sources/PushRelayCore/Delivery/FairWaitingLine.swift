/// The places in flight to one provider and the dispatches waiting for one: a pure state machine (the caller keeps the
/// waiters' continuations, the lock and the timer, and passes the time).
///
/// Up to `limit` dispatches hold a place. Past it, a dispatch waits in line until a place is freed or `maxWait` has
/// passed since it arrived. There is one line per client (its address): a freed place goes to the next client in turn
/// (round robin), so a client with many requests waiting delays every other client by at most one of its requests per
/// turn, however many it sends. Within one client's line, first come, first served.
///
/// Every waiter waits `maxWait` at most, so deadlines are in arrival order and `expire` finds the due ones at the front.
public struct FairWaitingLine<Waiter> {
    /// Places that can be held at once.
    public let limit: Int
    /// How long a dispatch may wait for a place.
    public let maxWait: Duration
    /// Places held now.
    public private(set) var inFlight = 0
    /// Dispatches waiting now.
    public var waiting: Int { waiters.count }

    private struct Entry {
        let client: String
        let deadline: ContinuousClock.Instant
        let waiter: Waiter
    }

    /// The live waiters by id. The queues below keep ids only and skip those no longer here (removed lazily).
    private var waiters: [UInt64: Entry] = [:]
    /// Each client's waiting ids, first come first.
    private var lines: [String: FIFOQueue<UInt64>] = [:]
    /// The clients with a line, in turn order; `next` is the one served next.
    private var turn: [String] = []
    private var next = 0
    /// Every waiting id in arrival (and so deadline) order.
    private var arrivals = FIFOQueue<UInt64>()

    public init(limit: Int, maxWait: Duration) {
        self.limit = max(1, limit)
        self.maxWait = maxWait
    }

    /// Takes a place if one is free (true); otherwise puts `waiter` in `client`'s line under `id`
    /// (false), until `release` hands it a place or `expire` / `remove` takes it out.
    public mutating func acquire(client: String, id: UInt64, now: ContinuousClock.Instant, waiter: Waiter) -> Bool {
        // Places are handed from one holder to the next waiter, so a free place means that nobody waits.
        if inFlight < limit {
            inFlight += 1
            return true
        }
        waiters[id] = Entry(client: client, deadline: now + maxWait, waiter: waiter)
        if lines[client] == nil {
            lines[client] = FIFOQueue()
            turn.append(client)
        }
        lines[client]!.append(id)
        arrivals.append(id)
        return false
    }

    /// Takes a place only if one is free: the path with no waiter to keep.
    public mutating func tryAcquire() -> Bool {
        guard inFlight < limit else { return false }
        inFlight += 1
        return true
    }

    /// Frees a place. When someone waits, the place goes to the next client in turn and its waiter is returned (the
    /// caller resumes it: it holds the place now).
    public mutating func release() -> Waiter? {
        while !turn.isEmpty {
            if next >= turn.count { next = 0 }
            let client = turn[next]
            guard let id = popLive(client) else {
                dropTurn(at: next)
                continue
            }
            let entry = waiters.removeValue(forKey: id)!
            if lines[client]!.isEmpty { dropTurn(at: next) } else { next += 1 }
            return entry.waiter
        }
        inFlight = max(0, inFlight - 1)
        return nil
    }

    /// Takes waiter `id` out of its line (its task was cancelled); nil when it is not waiting.
    public mutating func remove(id: UInt64) -> Waiter? {
        let entry = waiters.removeValue(forKey: id)
        if waiters.isEmpty { clearLines() }
        return entry?.waiter
    }

    /// Takes out every waiter whose wait has reached `maxWait` by `now` (the caller refuses them).
    public mutating func expire(now: ContinuousClock.Instant) -> [Waiter] {
        var due: [Waiter] = []
        while let id = arrivals.first {
            guard let entry = waiters[id] else {
                arrivals.popFirst()
                continue
            }
            guard entry.deadline <= now else { break }
            arrivals.popFirst()
            waiters[id] = nil
            due.append(entry.waiter)
        }
        if waiters.isEmpty { clearLines() }
        return due
    }

    /// When the next waiter's wait ends, if anyone waits.
    public mutating func nextDeadline() -> ContinuousClock.Instant? {
        while let id = arrivals.first {
            if let entry = waiters[id] { return entry.deadline }
            arrivals.popFirst()
        }
        return nil
    }

    /// The first id in `client`'s line that still waits, taken out of the line.
    private mutating func popLive(_ client: String) -> UInt64? {
        while let id = lines[client]?.first {
            lines[client]!.popFirst()
            if waiters[id] != nil { return id }
        }
        return nil
    }

    private mutating func dropTurn(at index: Int) {
        lines[turn[index]] = nil
        turn.remove(at: index)
        if next > index { next -= 1 }
        if next >= turn.count { next = 0 }
    }

    private mutating func clearLines() {
        lines = [:]
        turn = []
        next = 0
        arrivals = FIFOQueue()
    }
}
