/// Where a prune's walk of the delivery log stands: the walk finds the rows older than the cutoff wherever they sit.
///
/// The log has no index on its day (one more B-tree written per request), and its expired rows need not sit at its
/// start: a restored or merged database can hold newer rows at lower ids than millions of expired ones. So each prune
/// step reads on, in id order, from where the last one stopped, `window` rows per statement and outside the write
/// transaction, until it has found `limit` expired rows or reached the log's end; the write then deletes those rows by
/// id. Every statement is bounded (`window` rows read, `limit` rows deleted), and a step that finds fewer than `limit`
/// has read the whole log. Once the walk has reached the end for a cutoff, the rest of that day's prunes only look a
/// bounded way past the log's oldest row (rows logged late); a new cutoff starts a new walk. Pure: the engines run the
/// statements.
public struct PruneLogWalk: Sendable {
    /// Rows read per statement.
    public static let window = 10_000

    /// The day (`YYYY-MM-DD`) rows older than which are expired.
    public let cutoff: String
    /// Every expired row with an id up to this one is deleted.
    public private(set) var after = Int64.min
    /// Whether the walk has reached the log's end for this cutoff.
    public private(set) var finished = false
    /// The expired ids this step found so far, in id order.
    public private(set) var found: [Int64] = []
    /// The id after which the next statement reads.
    public private(set) var readFrom = Int64.min
    private var reachedEnd = false

    public init(cutoff: String) {
        self.cutoff = cutoff
    }

    /// Starts a step's reading where the last step's deletions left the walk.
    public mutating func begin() {
        found = []
        readFrom = after
        reachedEnd = false
    }

    /// Takes one statement's rows (ids after `readFrom`, in id order, at most `window`, each with whether it is
    /// expired). Returns whether to read another window: not once `limit` expired rows are found or the log has ended.
    public mutating func read(_ rows: [(id: Int64, expired: Bool)], limit: Int) -> Bool {
        for row in rows where row.expired {
            found.append(row.id)
            if found.count >= limit {
                readFrom = row.id
                return false
            }
        }
        if let last = rows.last { readFrom = last.id }
        if rows.count < Self.window {
            reachedEnd = true
            return false
        }
        return true
    }

    /// The found ids the step deletes when it has room for `room` more rows, and moves the walk past them (past all it
    /// read when they all fit).
    public mutating func take(room: Int) -> [Int64] {
        let taken = Array(found.prefix(max(room, 0)))
        if taken.count < found.count {
            if let last = taken.last { after = last }
        } else {
            after = readFrom
            finished = reachedEnd
        }
        found = []
        return taken
    }
}
