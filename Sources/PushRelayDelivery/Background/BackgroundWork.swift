import Logging
import ServiceLifecycle

/// Work that a timer or a callback starts and nobody awaits (a channel message falling back to the cloud, a relay's
/// `Unsubscribe-URL` DELETE): it runs as child tasks of this service, so graceful shutdown waits for what is running
/// and the process never exits in the middle of a delivery.
///
/// Work submitted after shutdown began is not run. Everything submitted here must be safe to lose at that point: a
/// channel message is stored, and the next start settles it (`PushChannelHub.recover`); an unsubscribe is a courtesy.
package final class BackgroundWork: Service, Sendable {
    package typealias Job = @Sendable () async -> Void

    private let jobs: AsyncStream<Job>
    private let submitter: AsyncStream<Job>.Continuation
    private let logger: Logger

    package init(logger: Logger) {
        (jobs, submitter) = AsyncStream.makeStream(of: Job.self)
        self.logger = logger
    }

    /// Runs `job` soon, as a child of this service's task.
    package func submit(_ job: @escaping Job) {
        if case .terminated = submitter.yield(job) {
            logger.debug("background work submitted during shutdown was not run")
        }
    }

    /// Runs submitted work until graceful shutdown, then waits for the work already running.
    package func run() async throws {
        await withDiscardingTaskGroup { group in
            await withGracefulShutdownHandler {
                for await job in jobs { group.addTask { await job() } }
            } onGracefulShutdown: {
                self.submitter.finish()
            }
        }
    }
}
