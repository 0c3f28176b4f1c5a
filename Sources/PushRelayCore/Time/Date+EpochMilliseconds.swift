import Foundation

extension Date {
    /// Whole milliseconds since 1970-01-01T00:00:00Z, rounded down (towards the past, also before 1970): how the
    /// stores keep instants in integer columns and how the logs print them.
    public var epochMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    /// The instant `milliseconds` after 1970-01-01T00:00:00Z.
    public init(epochMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }
}
