import NIOCore
import NIOPosix
import PushRelayStore

/// Resumes a caller whose write committed on the NIO event loop it submitted from (pass `lookup` to
/// `PushRelayDatabase`): the request continues on the thread that serves its connection.
public enum EventLoopCallers {
    /// The executor of the current thread's event loop, if it is one of the server's (NIO's shared group).
    public static let lookup: WriteCallerExecutor.Lookup = {
        guard let loop = MultiThreadedEventLoopGroup.currentEventLoop else { return nil }
        return executors[ObjectIdentifier(loop)]
    }

    /// One executor per loop of the shared group, built once.
    private static let executors: [ObjectIdentifier: LoopExecutor] = {
        var out: [ObjectIdentifier: LoopExecutor] = [:]
        for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() {
            out[ObjectIdentifier(loop)] = LoopExecutor(loop: loop)
        }
        return out
    }()

    private final class LoopExecutor: WriteCallerExecutor {
        let loop: any EventLoop

        init(loop: any EventLoop) {
            self.loop = loop
        }

        func execute(_ work: @escaping @Sendable () -> Void) {
            loop.execute(work)
        }
    }
}
