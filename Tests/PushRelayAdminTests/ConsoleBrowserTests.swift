import Foundation
import PushRelayCore
import PushRelayServerTestRig
import PushRelayStore
import Testing

/// The admin console in a real headless Chromium (Tests/Browser/console_test.py, Selenium + chromedriver) against a
/// live server with real traffic: the charts draw what the traffic produced, the quota table lists the tokens with
/// their maximum, an override set through the page is what the admin API then reports, nothing shows without the
/// token, no browser console error, no horizontal overflow at phone width. Screenshots of each view are saved (to docs/console-*.png with PUSHRELAY_UPDATE_SCREENSHOTS=1).
///
/// Needs python3 with `selenium`, `chromium` and `chromedriver` (scripts/install-deps --test); skipped without them,
/// except under CI=true, where it runs (and fails).
///
/// Alone: a headless Chromium against a live server takes both cores for seconds.
@Suite struct ConsoleBrowserTests {
    typealias C = ConsoleTestConfig

    static let repository = ConsoleAssetsTests.repository

    static func onPath(_ name: String) -> Bool {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return dirs.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }

    static var missing: String? {
        if !onPath("python3") { return "python3" }
        if !onPath("chromium") && !onPath("chromium-browser") && !onPath("google-chrome") { return "chromium" }
        if !onPath("chromedriver") { return "chromedriver" }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import selenium"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return "python3" }
        p.waitUntilExit()
        return p.terminationStatus == 0 ? nil : "the Python package selenium"
    }

    static var underCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    static var canRun: Bool {
        if let missing = missing {
            if !underCI {
                print(
                    "ConsoleBrowserTests skipped: \(missing) is missing (scripts/install-deps --test installs chromium, chromium-driver and selenium)"
                )
                return false
            }
        }
        return true
    }

    /// Posts `count` notifications at the clock's time and tallies the answers into the day's and hour's figures.
    final class Traffic: @unchecked Sendable {
        var days: [String: [String: Int]] = [:]
        var hours: [Int: [String: Int]] = [:]

        func post(_ s: TestServer, token: String, count: Int, at iso: String, ios: Bool = false, counted: Bool = true) async throws {
            s.clock.set(iso)
            let day = String(iso.prefix(10))
            let hour = Int(iso.dropFirst(11).prefix(2))!
            for _ in 0..<count {
                let r =
                    ios
                    ? try await s.ios(TestServer.haBody(token: token, appID: "io.robbie.HomeAssistant"))
                    : try await s.android(TestServer.haBody(token: token))
                let key: String
                switch r.status {
                case 201: key = "accepted"
                case 429: key = "rejectedByQuota"
                default:
                    guard counted else { continue }
                    key = "failed"
                }
                days[day, default: ["accepted": 0, "rejectedByQuota": 0, "failed": 0]][key, default: 0] += 1
                if day == "2026-11-21", key != "rejectedByQuota" { hours[hour, default: ["accepted": 0, "failed": 0]][key, default: 0] += 1 }
            }
        }
    }

    @Test(.enabled(if: canRun), .timeLimit(.minutes(5)))
    func theConsoleShowsTheTrafficAndChangesAnOverride() async throws {
        if let missing = Self.missing {
            Issue.record("CI=true but \(missing) is missing: scripts/install-deps --test installs chromium, chromium-driver and selenium")
            return
        }
        let provider = ConsoleTrafficProvider()
        try await TestServer.with(yaml: C.yaml, providers: ["console": provider], configure: C.configure) { (s: TestServer) async throws in
            let kitchen = "fcm-token:APA91b-kitchen-tablet-7f3a9c21e0"
            let hallway = "apns-hallway-ipad-5e1d0b7a92c4d8f1"
            let livingRoom = "fcm-token:APA91b-living-room-tv-2b8e61aa"
            let broken = "fcm-token:APA91b-broken-payload-f00d4e2c"
            let uninstalled = "fcm-token:APA91b-old-phone-uninstalled-9c0d"
            let traffic = Traffic()

            // The last four weeks (a daily limit of 5): busy days go past it, some deliveries fail.
            for back in 1...27 where back % 3 != 2 {
                let day = UTCDay(string: "2026-11-21")!.adding(days: -Int64(back)).description
                try await traffic.post(s, token: kitchen, count: 2 + (back * 5) % 6, at: "\(day)T08:00:00Z")
                try await traffic.post(s, token: livingRoom, count: 1 + back % 3, at: "\(day)T19:30:00Z")
                if back % 4 == 0 { try await traffic.post(s, token: broken, count: 1, at: "\(day)T20:00:00Z") }
            }
            // Today.
            try await traffic.post(s, token: kitchen, count: 8, at: "2026-11-21T07:10:00Z")
            try await traffic.post(s, token: hallway, count: 3, at: "2026-11-21T08:20:00Z", ios: true)
            try await traffic.post(s, token: hallway, count: 3, at: "2026-11-21T09:40:00Z", ios: true)
            try await traffic.post(s, token: livingRoom, count: 2, at: "2026-11-21T10:05:00Z")
            try await traffic.post(s, token: broken, count: 2, at: "2026-11-21T11:15:00Z")
            try await traffic.post(s, token: uninstalled, count: 1, at: "2026-11-21T11:50:00Z")
            // Remembered as dead: answered 410 without a delivery, and not counted.
            try await traffic.post(s, token: uninstalled, count: 1, at: "2026-11-21T12:00:00Z", counted: false)
            s.clock.set("2026-11-21T12:30:00Z")

            let today = try #require(traffic.days["2026-11-21"])
            #expect(today == ["accepted": 12, "rejectedByQuota": 4, "failed": 3], "\(today)")
            #expect(traffic.days.values.contains { $0["rejectedByQuota"]! > 0 } && traffic.days.count > 15)

            // Today's delivery-log rows, read straight from storage, by provider and outcome.
            let rows = try await s.storage.deliveries.recentDeliveries(pushToken: nil, limit: 10_000).filter { $0.day.description == "2026-11-21" }
            var byProvider: [String: Int] = [:]
            for r in rows { byProvider["\(r.provider)\t\(r.outcome.rawValue)", default: 0] += 1 }
            let providers: [JSONValue] = byProvider.sorted { $0.key < $1.key }.map {
                let parts = $0.key.split(separator: "\t").map(String.init)
                return ["provider": .string(parts[0]), "outcome": .string(parts[1]), "count": .int(Int64($0.value))]
            }

            let quotas: [JSONValue] = [
                ["target": .string(kitchen), "used": 5, "maximum": 5],
                ["target": .string(hallway), "used": 5, "maximum": 5],
                ["target": .string(livingRoom), "used": 2, "maximum": 5],
                ["target": .string(broken), "used": 0, "maximum": 5],
                ["target": .string(uninstalled), "used": 0, "maximum": 5],
            ]
            let overrideLimit = 50
            let expect: JSONValue = [
                "today": "2026-11-21",
                "days": .object(
                    traffic.days.mapValues { d in .object(d.mapValues { .int(Int64($0)) }) }
                ),
                "hours": .object(
                    Dictionary(uniqueKeysWithValues: traffic.hours.map { (String($0.key), JSONValue.object($0.value.mapValues { .int(Int64($0)) })) })
                ),
                "providers": .array(providers),
                "quotas": .array(quotas),
                "search": "kitchen",
                "searchMatches": 1,
                "override": ["target": .string(livingRoom), "limit": .int(Int64(overrideLimit))],
                "deadTokens": [.string(uninstalled)],
                "matrixQueued": 0,
                "latency": .object(try await s.deliveriesByProvider().mapValues { .int(Int64($0)) }),
            ]
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("pushrelay-console-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: work) }
            let expectFile = work.appendingPathComponent("expect.json")
            try expect.jsonString(pretty: true).write(to: expectFile, atomically: true, encoding: .utf8)

            // Screenshots go to the work folder; PUSHRELAY_UPDATE_SCREENSHOTS=1 writes them to docs/ instead (to refresh
            // the pictures the docs show), so that an ordinary run leaves the tree as it was.
            let docs =
                ProcessInfo.processInfo.environment["PUSHRELAY_UPDATE_SCREENSHOTS"] == "1"
                ? Self.repository.appendingPathComponent("docs") : work
            let (status, output) = try await Self.runScript([
                Self.repository.appendingPathComponent("Tests/Browser/console_test.py").path,
                "--url", "http://127.0.0.1:\(s.port)/admin/",
                "--token", C.adminToken,
                "--expect", expectFile.path,
                "--screenshots", docs.path,
            ])
            #expect(status == 0, "console_test.py failed (exit \(status)):\n\(output)")
            if status != 0 { return }

            // What the page changed, as the admin API sees it.
            let seen = try await s.request(.GET, "/admin/v1/quotas/\(livingRoom)", headers: C.auth)
            #expect(seen["limitOverride"] == .int(Int64(overrideLimit)))
            #expect(seen["rateLimits"]?["maximum"] == .int(Int64(overrideLimit)))
            for name in ["console-overview.png", "console-quotas.png", "console-dead-tokens.png"] {
                let size = (try? FileManager.default.attributesOfItem(atPath: docs.appendingPathComponent(name).path)[.size] as? Int) ?? 0
                #expect(size > 10_000, "\(name) was written")
            }
        }
    }

    /// Runs python3 with `arguments`; its output (stdout and stderr together) goes through a file, not a pipe that
    /// could fill.
    static func runScript(_ arguments: [String]) async throws -> (Int32, String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("console-test-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-u"] + arguments
        p.standardOutput = handle
        p.standardError = handle
        let status: Int32 = try await withCheckedThrowingContinuation { cont in
            p.terminationHandler = { cont.resume(returning: $0.terminationStatus) }
            do { try p.run() } catch { cont.resume(throwing: error) }
        }
        try handle.close()
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        print(output)
        if status == 2, !underCI { print("ConsoleBrowserTests: the browser could not be started; see above") }
        return (status, output)
    }
}
