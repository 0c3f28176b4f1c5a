import PushRelayHTTP
import Testing

@testable import PushRelayServer

/// How `LISTEN_PID` and `LISTEN_FDS` are read (`sd_listen_fds(3)`): sockets from descriptor 3 on, only for the process
/// they name.
struct SocketActivationTests {
    @Test func theSocketsPassedToThisProcessStartAtDescriptorThree() {
        #expect(SocketActivation.passed(environment: ["LISTEN_PID": "42", "LISTEN_FDS": "1"], pid: 42) == .sockets([3]))
        #expect(SocketActivation.passed(environment: ["LISTEN_PID": "42", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "a:b"], pid: 42) == .sockets([3, 4]))
    }

    @Test func nothingWasPassedWithoutTheVariablesOrToAnotherProcess() {
        #expect(SocketActivation.passed(environment: [:], pid: 42) == .none)
        #expect(SocketActivation.passed(environment: ["LISTEN_PID": "42"], pid: 42) == .none)
        // A parent's variables, inherited by a process they were not meant for.
        #expect(SocketActivation.passed(environment: ["LISTEN_PID": "41", "LISTEN_FDS": "1"], pid: 42) == .none)
    }

    @Test func malformedVariablesAreErrors() {
        for environment in [
            ["LISTEN_FDS": "1"],
            ["LISTEN_PID": "me", "LISTEN_FDS": "1"],
            ["LISTEN_PID": "42", "LISTEN_FDS": "0"],
            ["LISTEN_PID": "42", "LISTEN_FDS": "many"],
        ] {
            guard case .invalid(let problem) = SocketActivation.passed(environment: environment, pid: 42) else {
                Issue.record("\(environment) was accepted")
                continue
            }
            #expect(problem.contains("LISTEN_"), "\(problem)")
        }
    }
}
