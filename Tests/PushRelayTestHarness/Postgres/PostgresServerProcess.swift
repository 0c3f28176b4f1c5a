import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL server: `initdb` into a temporary directory, `postgres` on a free loopback port, stopped at
/// process exit. Runs as the `postgres` user when started as root (initdb and postgres refuse root).
///
/// Children are started with `ProcessSpawn` (tests spawn in parallel, where Foundation's `Process` crashed). Most tests
/// use it through `PostgresTestDatabase` (one shared server, a fresh database each); a test that stops and restarts the
/// server starts one of its own.
///
/// The superuser `postgres` logs in with `password` over TCP (scram-sha-256). A server left by a crashed test process
/// is found by its directory (`pushrelay-pg-*`, holding the owner's pid) and stopped by the next start.
public final class PostgresServerProcess: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    public static let directoryPrefix = "pushrelay-pg-"
    public static let installHint = "install PostgreSQL (apt-get install postgresql, or scripts/install-deps --test)"

    public let host = "127.0.0.1"
    public let port: Int
    public let user = "postgres"
    public let password: String
    /// The temporary directory: `data/`, the socket, the log.
    public let directory: URL
    /// The directory holding `initdb`, `postgres` and `psql`.
    public let bin: URL
    /// The postmaster's pid (ours: setpriv execs in place). Guarded by `lock`.
    private var pid: pid_t
    private var exited = false
    private let lock = NSLock()

    /// The directory holding `initdb` and `postgres`: `PUSHRELAY_POSTGRES_BIN` if set (nil if they are not there),
    /// else the newest `/usr/lib/postgresql/*/bin`, else nil.
    public static var binDirectory: URL? {
        let fm = FileManager.default
        if let dir = ProcessInfo.processInfo.environment["PUSHRELAY_POSTGRES_BIN"] {
            return fm.isExecutableFile(atPath: dir + "/initdb") && fm.isExecutableFile(atPath: dir + "/postgres") ? URL(fileURLWithPath: dir) : nil
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? fm.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        for v in versions where fm.isExecutableFile(atPath: "\(root)/\(v)/bin/initdb") && fm.isExecutableFile(atPath: "\(root)/\(v)/bin/postgres") {
            return URL(fileURLWithPath: "\(root)/\(v)/bin")
        }
        return nil
    }

    /// Starts a new server and waits until it accepts connections.
    public static func start(timeout: TimeInterval = 60) throws -> PostgresServerProcess {
        guard let bin = binDirectory else { throw Failure(description: "PostgreSQL binaries not found: \(installHint)") }
        stopLeftovers()
        let asRoot = getuid() == 0
        let tmp = URL(fileURLWithPath: NSTemporaryDirectory())
        let id = UUID().uuidString.prefix(8)
        let dir = tmp.appendingPathComponent("\(directoryPrefix)\(id)")
        // Made under a name `stopLeftovers` does not look at, and given its final name only once it names its owner:
        // another test starting a server at the same moment must not take it for a leftover and delete it.
        let staging = tmp.appendingPathComponent(".staging-\(directoryPrefix)\(id)")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        try "\(getpid())".write(to: staging.appendingPathComponent("owner.pid"), atomically: true, encoding: .utf8)
        try FileManager.default.moveItem(at: staging, to: dir)
        let password = UUID().uuidString
        let pwfile = dir.appendingPathComponent("pwfile")
        try password.write(to: pwfile, atomically: true, encoding: .utf8)
        if asRoot { try chownToPostgres(dir) }

        let initdb = try ProcessSpawn.runBlocking(
            command(
                bin.appendingPathComponent("initdb").path,
                [
                    "-D", dir.appendingPathComponent("data").path, "-U", "postgres", "--pwfile", pwfile.path, "--auth-local=trust",
                    "--auth-host=scram-sha-256", "--no-locale", "--encoding=UTF8", "--no-sync",
                ],
                asRoot: asRoot
            )
        )
        guard initdb.status == 0 else {
            try? FileManager.default.removeItem(at: dir)
            throw Failure(description: "initdb failed (\(initdb.status)): \((initdb.stderr + initdb.stdout).suffix(500))")
        }

        var lastError = "did not start"
        for _ in 0..<3 {
            let port = try freePort()
            do {
                let pid = try launch(bin: bin, directory: dir, port: port, asRoot: asRoot, timeout: timeout)
                let server = PostgresServerProcess(bin: bin, port: port, password: password, directory: dir, pid: pid)
                server.registerForExit()
                return server
            } catch let e as Failure {
                lastError = e.description
            }
        }
        try? FileManager.default.removeItem(at: dir)
        throw Failure(description: "postgres did not start: \(lastError)")
    }

    /// Starts `postgres` on the data directory and waits until it is ready for queries. Returns its pid.
    private static func launch(bin: URL, directory dir: URL, port: Int, asRoot: Bool, timeout: TimeInterval) throws -> pid_t {
        let log = dir.appendingPathComponent("postgres.log")
        let pid = try ProcessSpawn.start(
            command(
                bin.appendingPathComponent("postgres").path,
                [
                    "-D", dir.appendingPathComponent("data").path, "-p", "\(port)", "-k", dir.path,
                    "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
                    "-c", "max_connections=400", "-c", "shared_buffers=32MB",
                ],
                asRoot: asRoot
            ),
            stderrPath: log.path
        )
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while Date() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw Failure(description: String(text.suffix(500)))
            }
            // postmaster.pid's 8th line says `ready` once queries are taken (before, logins get "starting up").
            if isReady(dir), accepts(port: port) { return pid }
            usleep(50_000)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw Failure(description: "not ready within \(Int(timeout)) s: \(text.suffix(500))")
    }

    private static func isReady(_ dir: URL) -> Bool {
        guard let text = try? String(contentsOf: dir.appendingPathComponent("data/postmaster.pid"), encoding: .utf8) else { return false }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.count > 7 && lines[7].trimmingCharacters(in: .whitespaces) == "ready"
    }

    private init(bin: URL, port: Int, password: String, directory: URL, pid: pid_t) {
        self.bin = bin
        self.port = port
        self.password = password
        self.directory = directory
        self.pid = pid
    }

    /// Stops the server at once (SIGQUIT: immediate shutdown, nothing to keep) and removes its directory.
    public func stop() {
        halt()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the server at once and keeps its data, for `resume` (an outage).
    public func halt() {
        lock.lock()
        defer { lock.unlock() }
        guard !exited else { return }
        kill(pid, SIGQUIT)
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid {
                exited = true
                return
            }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        exited = true
    }

    /// Starts the halted server again on the same port and data.
    public func resume(timeout: TimeInterval = 60) throws {
        lock.lock()
        defer { lock.unlock() }
        guard exited else { return }
        pid = try Self.launch(bin: bin, directory: directory, port: port, asRoot: getuid() == 0, timeout: timeout)
        exited = false
    }

    // MARK: Exit and leftovers

    nonisolated(unsafe) private static var running: [PostgresServerProcess] = []
    private static let runningLock = NSLock()

    private func registerForExit() {
        Self.runningLock.lock()
        defer { Self.runningLock.unlock() }
        if Self.running.isEmpty {
            atexit {
                PostgresServerProcess.runningLock.lock()
                let servers = PostgresServerProcess.running
                PostgresServerProcess.running = []
                PostgresServerProcess.runningLock.unlock()
                for s in servers { s.stop() }
            }
        }
        Self.running.append(self)
    }

    /// Stops servers whose test process is gone (it crashed, or was killed before its exit handler ran).
    public static func stopLeftovers() {
        let tmp = URL(fileURLWithPath: NSTemporaryDirectory())
        let fm = FileManager.default
        for name in (try? fm.contentsOfDirectory(atPath: tmp.path)) ?? [] where name.hasPrefix(directoryPrefix) {
            let dir = tmp.appendingPathComponent(name)
            let owner = (try? String(contentsOf: dir.appendingPathComponent("owner.pid"), encoding: .utf8)).flatMap { pid_t($0) }
            if let owner, owner == getpid() || kill(owner, 0) == 0 { continue }
            if let pid = postmasterPID(dir) { kill(pid, SIGQUIT) }
            try? fm.removeItem(at: dir)
        }
    }

    private static func postmasterPID(_ dir: URL) -> pid_t? {
        guard let text = try? String(contentsOf: dir.appendingPathComponent("data/postmaster.pid"), encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first.flatMap { pid_t($0) }
    }

    // MARK: Helpers

    /// `path arguments`, run as the `postgres` user when we are root (setpriv execs in place: the pid is the server's).
    private static func command(_ path: String, _ arguments: [String], asRoot: Bool) -> [String] {
        asRoot ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", path] + arguments : [path] + arguments
    }

    private static func chownToPostgres(_ url: URL) throws {
        guard let pw = getpwnam("postgres") else {
            throw Failure(description: "running as root and there is no 'postgres' user to run PostgreSQL as: \(installHint)")
        }
        guard chown(url.path, pw.pointee.pw_uid, pw.pointee.pw_gid) == 0 else {
            throw Failure(description: "cannot give \(url.path) to the postgres user (errno \(errno))")
        }
    }

    /// A port nothing listens on now (the kernel's pick for a socket bound to port 0).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard bound else { throw Failure(description: "bind() failed") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Whether something accepts TCP connections on the loopback port.
    public static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
