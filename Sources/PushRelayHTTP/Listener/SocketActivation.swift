#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// systemd's socket activation (`sd_listen_fds(3)`): a process started by a `.socket` unit finds its listening sockets
/// at descriptors 3, 4, … and is told so by `LISTEN_PID` (its own process id) and `LISTEN_FDS` (how many). systemd
/// keeps the socket open across restarts of the service, so connections that arrive while no process accepts wait in
/// the kernel's backlog instead of being refused.
public enum SocketActivation {
    /// The first passed descriptor (`SD_LISTEN_FDS_START`).
    public static let firstDescriptor: Int32 = 3
    /// The variables systemd sets; removed once read, so that a child process does not take them for its own.
    package static let variables = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]

    /// What the environment says was passed to the process `pid`.
    public enum Passed: Equatable, Sendable {
        /// Nothing (no `LISTEN_FDS`, or one meant for another process).
        case none
        /// These descriptors, in order.
        case sockets([Int32])
        /// `LISTEN_FDS` or `LISTEN_PID` is set but not a positive number.
        case invalid(String)
    }

    /// Reads `LISTEN_PID` and `LISTEN_FDS` from `environment`, for the process `pid`.
    public static func passed(environment: [String: String], pid: Int32) -> Passed {
        guard let count = environment["LISTEN_FDS"] else { return .none }
        guard let owner = environment["LISTEN_PID"] else {
            return .invalid("LISTEN_FDS is set without LISTEN_PID")
        }
        guard let ownerPID = Int32(owner), ownerPID > 0 else { return .invalid("LISTEN_PID must be a process id; got '\(owner)'") }
        guard ownerPID == pid else { return .none }
        guard let n = Int32(count), n > 0, n <= 1024 else { return .invalid("LISTEN_FDS must be a positive number; got '\(count)'") }
        return .sockets(Array(firstDescriptor..<(firstDescriptor + n)))
    }

    /// The sockets passed to this process, taken: the variables are removed from the environment and the descriptors
    /// marked close-on-exec, so that no child process inherits them. A passed descriptor that is not a listening stream
    /// socket is an error.
    public static func take() throws(SocketActivationError) -> [Int32] {
        var environment: [String: String] = [:]
        for name in variables { if let v = getenv(name) { environment[name] = String(cString: v) } }
        let found = passed(environment: environment, pid: getpid())
        if found != .none {
            for name in variables { unsetenv(name) }
        }
        switch found {
        case .none:
            return []
        case .invalid(let problem):
            throw SocketActivationError(description: problem)
        case .sockets(let descriptors):
            for fd in descriptors {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                var listening: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening == 1 else {
                    throw SocketActivationError(
                        description: "descriptor \(fd) passed by systemd is not a listening socket (the .socket unit needs ListenStream=)"
                    )
                }
            }
            return descriptors
        }
    }
}

/// The sockets systemd passed cannot be used; the message says why.
public struct SocketActivationError: Error, CustomStringConvertible {
    public var description: String
}
