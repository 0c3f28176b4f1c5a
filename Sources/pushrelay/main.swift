import ArgumentParser
import NIOCore
import NIOPosix

#if canImport(Glibc)
// First, before any thread starts: `serve` may re-execute itself with glibc's allocator tuned (AllocatorTuning).
AllocatorTuning.applyToServer()
#endif

// Run Swift Concurrency's global executor on NIO's event-loop threads (one per core). Request handlers then run on the
// threads that do the socket I/O instead of hopping to Dispatch's pool and back, which is what most of a small
// request's CPU went to. Nothing in the server blocks a thread: SQLite work runs on GRDB's own queues.
_ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()

// In top-level code `PushRelay.main()` binds to the synchronous overload, which refuses asynchronous subcommands;
// `start()` calls it from an async function, where the async overload wins.
await PushRelay.start()
