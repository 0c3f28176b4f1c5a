import Foundation
import PushRelayCore
import Testing

@Suite struct PruneScheduleTests {
    let noon = UTCDay(string: "2026-11-21")!.start.addingTimeInterval(12 * 3600)

    @Test func dueAtOnceThenHourlyAndAtEachNewUTCDay() {
        var schedule = PruneSchedule(interval: 3600)
        #expect(schedule.isDue(at: noon))
        schedule.ran(at: noon)
        #expect(!schedule.isDue(at: noon.addingTimeInterval(3599)))
        #expect(schedule.isDue(at: noon.addingTimeInterval(3600)))
        let lateEvening = noon.addingTimeInterval(11 * 3600 + 59 * 60)
        schedule.ran(at: lateEvening)
        #expect(!schedule.isDue(at: lateEvening.addingTimeInterval(59)))
        // Midnight UTC, one minute later: a new day is due at once.
        #expect(schedule.isDue(at: lateEvening.addingTimeInterval(60)))
    }

    @Test func aClockSetBackIsDue() {
        var schedule = PruneSchedule(interval: 3600)
        schedule.ran(at: noon)
        #expect(schedule.isDue(at: noon.addingTimeInterval(-60)))
    }
}
