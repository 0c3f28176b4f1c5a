import Foundation
import GRDB
import Testing

@testable import PushRelaySQLite
@testable import PushRelayStore

/// Which errors make the SQLite engine report a storage fault, and how the fault ends.
@Suite struct StorageFaultTrackerTests {
    @Test(arguments: [ResultCode.SQLITE_FULL, .SQLITE_READONLY, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_BUSY, .SQLITE_CORRUPT])
    func storageErrorsAreFaults(code: ResultCode) {
        let tracker = StorageFaultTracker()
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        tracker.failed(DatabaseError(resultCode: code, message: "boom"), now: at)
        #expect(tracker.current.state == .failing)
        #expect(tracker.current.since == at)
        #expect(tracker.current.message?.contains("boom") == true)
        // A later failure keeps the start of the fault; a durable write ends it.
        tracker.failed(DatabaseError(resultCode: code, message: "again"), now: at.addingTimeInterval(5))
        #expect(tracker.current.since == at)
        tracker.succeeded()
        #expect(tracker.current == .ok)
    }

    @Test func aFailedSyncIsAFault() {
        let tracker = StorageFaultTracker()
        tracker.failed(StoreError.syncFailed(path: "/x-wal", underlying: "Input/output error"))
        #expect(tracker.current.state == .failing)
    }

    @Test(arguments: [ResultCode.SQLITE_CONSTRAINT, .SQLITE_MISMATCH, .SQLITE_ERROR])
    func rulesAreNotFaults(code: ResultCode) {
        let tracker = StorageFaultTracker()
        tracker.failed(DatabaseError(resultCode: code, message: "rule"))
        tracker.failed(StorageError.closed)
        #expect(tracker.current == .ok)
    }
}
