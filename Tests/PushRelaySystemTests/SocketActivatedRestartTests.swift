import Foundation
import PushRelayCore
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A restart of the only instance refuses nothing when systemd holds the listening socket (socket activation): the
/// real `pushrelay serve` is started on a socket the test holds, stopped with SIGTERM under clients posting without
/// pause, and started again on the same socket; every notification is answered 201, none refused or reset, and each
/// is counted once.
@Suite(.serialized) struct SocketActivatedRestartTests {
    @Test func aRestartOnTheSameSocketRefusesNothingAndAnswersEverything() async throws {
        let dir = TempPath.directory(prefix: "pushrelay-restart")
        let config = dir + "/pushrelay.yaml"
        try """
        http:
          host: 127.0.0.1
          port: 1
          drain_period: 0
        storage:
          sqlite_path: \(dir)/pushrelay.sqlite
        quota:
          daily_limit: 10000000
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let launcher = try SocketLauncher()
        let first = try await launcher.start(config: config, logFile: dir + "/first.log")
        let load = NotifyLoad(clients: 16) { launcher.port }
        load.start()
        var statuses: [Int32] = []
        let tally: NotifyLoad.Tally
        do {
            #expect(await load.waitForAnswers(300), "\(load.tally)")
            kill(first, SIGTERM)
            statuses.append(await ProcessSpawn.waitForExit(first))
            // As systemd restarts a service: the next process starts once the last one exited; meanwhile the
            // connections wait in the socket's queue.
            let second = try await launcher.start(config: config, logFile: dir + "/second.log")
            #expect(await load.waitForAnswers(300), "\(load.tally)")
            // The clients stop before the last process does: nobody would take what they sent after it.
            tally = await load.stop()
            kill(second, SIGTERM)
            statuses.append(await ProcessSpawn.waitForExit(second))
        } catch {
            _ = await load.stop()
            throw error
        }
        print("SocketActivatedRestartTests: \(tally)")
        let firstLog = (try? String(contentsOfFile: dir + "/first.log", encoding: .utf8)) ?? ""
        #expect(statuses == [0, 0], "\(firstLog)")
        #expect(tally.refused == 0, "\(tally)")
        #expect(tally.lost == 0, "\(tally)")
        #expect(tally.answered.keys.sorted() == [201], "\(tally)")
        for step in ["stopped accepting connections", "every connection closed", "database closed"] {
            #expect(firstLog.contains(step), "no line with \(step): \(firstLog)")
        }

        // Each 201 is counted once (and the requests a client stopped waiting for were sent after its last answer).
        // Read through the storage contract, today and yesterday (the run may cross midnight UTC).
        let storage = try Storage.sqlite(path: dir + "/pushrelay.sqlite", schema: .check)
        let today = UTCDay(Date())
        var counted = 0
        for day in [today.adding(days: -1), today] {
            counted += try await storage.admin.list(day: day, top: nil).filter { $0.pushToken.hasPrefix("load:") }.map(\.successful).reduce(0, +)
        }
        try await storage.engine.flushAndClose()
        #expect(counted == tally.answered[201], "\(tally)")
    }
}
