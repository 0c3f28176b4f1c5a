import Logging
import PushRelayCore
import PushRelayDelivery
import PushRelayTestHarness
import ServiceLifecycle
import Testing

@testable import PushRelayServer

/// Work started by timers and socket callbacks runs under ServiceLifecycle: shutdown waits for it.
///
/// ThreadSanitizer: work started from timers and callbacks, joined at shutdown.
@Suite struct BackgroundWorkTests {
    @Test func shutdownWaitsForRunningWorkAndRunsNothingSubmittedAfterIt() async throws {
        let logger = Logger(label: "test")
        let work = BackgroundWork(logger: logger)
        let (release, releaser) = AsyncStream.makeStream(of: Void.self)
        let events = Locked<[String]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            let services = ServiceGroup(configuration: .init(services: [work], gracefulShutdownSignals: [], logger: logger))
            group.addTask {
                try await services.run()
                events.withLock { $0.append("stopped") }
            }
            work.submit {
                events.withLock { $0.append("started") }
                for await _ in release { break }
                events.withLock { $0.append("finished") }
            }
            try await eventually("the job runs") { events.withLock { $0 } == ["started"] }
            await services.triggerGracefulShutdown()
            try await consistently("the service waits for the running job", for: .milliseconds(200)) {
                events.withLock { $0 } == ["started"]
            }
            releaser.yield()
            try await group.waitForAll()
            #expect(events.withLock { $0 } == ["started", "finished", "stopped"])
        }
        work.submit { events.withLock { $0.append("late") } }
        try await consistently("work submitted after shutdown is not run", for: .milliseconds(100)) {
            !events.withLock { $0 }.contains("late")
        }
    }
}
