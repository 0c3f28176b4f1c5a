import Foundation
import PushRelayCore

#if canImport(Glibc)
import Glibc
#endif

/// Child processes for the tests (the CLI, Python), started with `posix_spawn` and read with `poll`.
///
/// Foundation's `Process` is not used: with tests spawning in parallel it crashed inside `Process.run()` (a memcpy),
/// even behind a lock, and its `readDataToEndOfFile` aborts on EINTR.
public enum ProcessSpawn {
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    public struct SpawnFailed: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Runs `arguments` (the first is a path, or a name looked up in PATH) to its end, feeding it `stdin`, and returns
    /// its exit status and output. Blocks the calling thread.
    public static func runBlocking(_ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil) throws -> Output {
        let input = try makePipe()
        let output = try makePipe()
        let errors = try makePipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        posix_spawn_file_actions_adddup2(&actions, output.write, 1)
        posix_spawn_file_actions_adddup2(&actions, errors.write, 2)
        closeInherited(&actions)
        let pid: pid_t
        do {
            pid = try spawn(arguments, environment: environment, actions: &actions)
        } catch {
            for fd in [input.read, input.write, output.read, output.write, errors.read, errors.write] { close(fd) }
            throw error
        }
        close(input.read)
        close(output.write)
        close(errors.write)
        if let stdin {
            // Small inputs (JSON, scripts' arguments): they fit the pipe, so this cannot block on the child's output.
            let bytes = Array(stdin.utf8)
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { write(input.write, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    break
                }
                offset += n
            }
        }
        close(input.write)
        let (out, err) = readBoth(output.read, errors.read)
        close(output.read)
        close(errors.read)
        return Output(status: wait(pid), stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    /// `runBlocking` on a thread of its own, so that no cooperative thread waits for the child.
    public static func run(_ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil) async throws -> Output {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Output, any Error>) in
            Thread { c.resume(with: Result { try runBlocking(arguments, environment: environment, stdin: stdin) }) }.start()
        }
    }

    /// Starts a long-running child: stdin and stdout on /dev/null, stderr appended to `stderrPath`. Returns its pid.
    public static func start(_ arguments: [String], environment: [String: String]? = nil, stderrPath: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        closeInherited(&actions)
        return try spawn(arguments, environment: environment, actions: &actions)
    }

    /// Waits for the child to end (on a thread of its own) and returns its exit status (128 + n for signal n).
    public static func waitForExit(_ pid: pid_t) async -> Int32 {
        await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
            Thread { c.resume(returning: wait(pid)) }.start()
        }
    }

    /// Sends `signal` and waits for the child to end, at most `limit`: past it, SIGKILL ends the child and the result
    /// is nil, so that a child that ignores the signal fails its test instead of hanging it or outliving it.
    public static func stop(_ pid: pid_t, _ signal: Int32 = SIGTERM, within limit: Duration = .seconds(30)) async -> Int32? {
        let killed = Locked(false)
        kill(pid, signal)
        let killer = Task {
            try await Task.sleep(for: limit)
            killed.withLock { $0 = true }
            kill(pid, SIGKILL)
        }
        let status = await waitForExit(pid)
        killer.cancel()
        return killed.withLock { $0 } ? nil : status
    }

    /// Runs `body`, and if it throws, kills the child `pid` (SIGKILL) and waits for it before passing the error on:
    /// a test that starts a process stops it whatever the outcome.
    public static func stoppingOnThrow<T>(_ pid: pid_t, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            kill(pid, SIGKILL)
            _ = await waitForExit(pid)
            throw error
        }
    }

    /// The environment tests start children with: this process's, without any PUSHRELAY_ setting, plus `extra`.
    public static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHRELAY_") }
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// The child keeps only stdin, stdout and stderr. Without this it would inherit every descriptor the test process
    /// has open without close-on-exec at that moment, sockets included: a long-lived child (the throwaway PostgreSQL
    /// server) would then hold a copy of a server's accepted socket, and the server's close would never reach its
    /// peer (a test waiting for the close waited for ever).
    private static func closeInherited(_ actions: inout posix_spawn_file_actions_t) {
        _ = addCloseFrom?(&actions, 3)
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module does not export.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    private static func spawn(_ arguments: [String], environment: [String: String]?, actions: inout posix_spawn_file_actions_t) throws -> pid_t {
        guard let program = arguments.first else { throw SpawnFailed(description: "no program to run") }
        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let rc = spawnLock.withLock { _ in posix_spawnp(&pid, program, &actions, nil, &argv, &envp) }
        guard rc == 0 else { throw SpawnFailed(description: "cannot start \(program): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// A pipe whose ends close on exec. Made under `spawnLock`, so that no child is spawned between `pipe` and
    /// `FD_CLOEXEC` and inherits an end (it would hold another child's output open).
    private static func makePipe() throws -> (read: Int32, write: Int32) {
        try spawnLock.withLock { _ in
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { throw SpawnFailed(description: "pipe: \(String(cString: strerror(errno)))") }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            return (fds[0], fds[1])
        }
    }

    /// Guards nothing but the order of spawns and pipes. Its value is a number, not `()`: the address of a value of
    /// size zero is the mutex pointer's, so ThreadSanitizer took the lock's own bookkeeping for a race.
    private static let spawnLock = Locked(0)

    /// Reads both pipes until both are at end of file.
    private static func readBoth(_ a: Int32, _ b: Int32) -> ([UInt8], [UInt8]) {
        var out: [[UInt8]] = [[], []]
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        var open = 2
        var buffer = [UInt8](repeating: 0, count: 65536)
        while open > 0 {
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            for i in fds.indices where fds[i].fd >= 0 && fds[i].revents != 0 {
                let n = read(fds[i].fd, &buffer, buffer.count)
                if n > 0 {
                    out[i].append(contentsOf: buffer[0..<n])
                } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                    fds[i].fd = -1
                    open -= 1
                }
            }
        }
        return (out[0], out[1])
    }

    private static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}
