import Foundation
import PushRelayTestHarness

#if canImport(Glibc)
import Glibc
#endif

/// What systemd does for a service with a `.socket` unit: it holds a listening socket on 127.0.0.1 for as long as it
/// lives and starts `pushrelay serve` processes on it, one after the other, each with the socket as descriptor 3 and
/// `LISTEN_FDS=1`, `LISTEN_PID=<its pid>` (set by a shell that then `exec`s the server, keeping its pid).
package final class SocketLauncher: Sendable {
    package let port: Int
    private let listening: Int32

    package init() throws {
        let made = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard made >= 0 else { throw ProcessSpawn.SpawnFailed(description: "socket: \(String(cString: strerror(errno)))") }
        // Never descriptor 3 itself: dup2 onto 3 in the child must make a copy (which is what clears close-on-exec).
        let fd = made > 3 ? made : fcntl(made, F_DUPFD_CLOEXEC, 10)
        if fd != made { close(made) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
                bind(fd, p, length) == 0 && listen(fd, SOMAXCONN) == 0 && getsockname(fd, p, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw ProcessSpawn.SpawnFailed(description: "bind/listen: \(String(cString: strerror(errno)))")
        }
        listening = fd
        port = Int(UInt16(bigEndian: addr.sin_port))
    }

    deinit { close(listening) }

    /// Starts `pushrelay serve --config <config>` on the socket (stderr appended to `logFile`) and waits (up to 30 s)
    /// until it says it listens on it.
    package func start(config: String, logFile: String) async throws -> pid_t {
        FileManager.default.createFile(atPath: logFile, contents: nil)
        let arguments = ["/bin/sh", "-c", "LISTEN_PID=$$ exec \"$0\" \"$@\"", CLI.binary.path, "serve", "--config", config]
        let pid = try spawn(arguments, environment: ProcessSpawn.environment(["LISTEN_FDS": "1"]), stderrPath: logFile)
        let marker = "listening on 127.0.0.1:\(port) (the socket passed by systemd"
        for _ in 0..<600 {
            if ((try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "").contains(marker) { return pid }
            try await Task.sleep(for: .milliseconds(50))
        }
        kill(pid, SIGKILL)
        _ = await ProcessSpawn.waitForExit(pid)
        throw ProcessSpawn.SpawnFailed(description: "server did not start: \((try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "")")
    }

    /// posix_spawn with the socket as descriptor 3 and no other descriptor but the standard three.
    private func spawn(_ arguments: [String], environment: [String: String], stderrPath: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, listening, 3)
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 4) }
        let env = environment.map { "\($0.key)=\($0.value)" }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, arguments[0], &actions, nil, &argv, &envp)
        guard rc == 0 else { throw ProcessSpawn.SpawnFailed(description: "cannot start \(arguments[0]): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module does not export.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
}
