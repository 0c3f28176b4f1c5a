import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOPosix
import PushRelayCore
import PushRelayEventLoopClock
import PushRelayProviders

#if canImport(Glibc)
import Glibc
#endif

/// `pushrelay-dev provider-load`: the provider client alone, with no server around it. It sends Home Assistant
/// notifications, translated as the server translates them, straight through one provider instance to the fakes of
/// `pushrelay-dev fake-providers`, and prints what one exchange costs this process. Set beside the server's own
/// figures (`Benchmarks/run.sh`), that says how much of a notification's CPU is the provider exchange itself.
struct ProviderLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "provider-load",
        abstract: "Send notifications through one provider client to the fakes and print its CPU per exchange.",
        discussion: """
            Reads DIR/fcm-options.json or DIR/apns-options.json (written by `pushrelay-dev fake-providers --out DIR`), \
            builds that provider as `pushrelay serve` would, warms it up, translates --requests notifications (each \
            with its own push token), then keeps --concurrency sends in flight until all are answered. Prints the \
            exchanges a second, p50 and p99, and this process's CPU (user + system) per exchange while sending.
            """
    )

    @Option(help: "The folder `pushrelay-dev fake-providers --out` wrote.") var dir = "./fake-providers"
    @Option(help: "fcm or apns.") var type = "fcm"
    @Option(help: "Exchanges to measure (after a warm-up of a tenth as many).") var requests = 50_000
    @Option(help: "Sends in flight at once.") var concurrency = 64

    func run() async throws {
        // As `pushrelay serve` runs: Swift Concurrency's global executor on NIO's event-loop threads.
        let onEventLoops = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        guard let kind = ProviderType(rawValue: type), kind == .fcm || kind == .apns else {
            throw ValidationError("--type must be fcm or apns")
        }
        let file = "\(dir)/\(type)-options.json"
        guard let data = FileManager.default.contents(atPath: file), case .object(let options) = try JSONParser.parse(Array(data)) else {
            throw ValidationError("cannot read \(file): run `pushrelay-dev fake-providers --out \(dir)` first")
        }
        var logger = Logger(label: "provider-load")
        logger.logLevel = .error
        let provider = try kind.make(name: type, options: options, baseDirectory: dir, clock: EventLoopClock(), logger: logger)
        let platform: HAPlatform = kind == .fcm ? .android : .ios
        let warmUp = try (0..<max(requests / 10, concurrency)).map { try Self.delivery($0, seed: 1, platform: platform) }
        _ = try await Self.load(provider, warmUp, concurrency: concurrency)
        // Translated before the clock starts: the figure is the exchange alone.
        let deliveries = try (0..<requests).map { try Self.delivery($0, seed: 2, platform: platform) }
        let cpuBefore = Self.processCPU()
        let started = ContinuousClock.now
        let latencies = try await Self.load(provider, deliveries, concurrency: concurrency)
        let wall = ContinuousClock.now - started
        let cpu = Self.processCPU() - cpuBefore
        await provider.shutdown()
        let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        let sorted = latencies.sorted()
        print(
            String(
                format: "%@ client alone: %d exchanges, %.0f/s, p50 %.2f ms, p99 %.2f ms, CPU %.0f us per exchange (%d in flight%@)",
                type,
                requests,
                Double(requests) / seconds,
                sorted[sorted.count / 2] * 1000,
                sorted[sorted.count * 99 / 100] * 1000,
                cpu * 1e6 / Double(requests),
                concurrency,
                onEventLoops ? "" : "; tasks on the default executor"
            )
        )
    }

    /// Sends `deliveries` with `concurrency` in flight; returns each one's latency in seconds. Any failure stops the
    /// run: the figures are only worth something for exchanges that succeeded.
    static func load(_ provider: any PushProvider, _ deliveries: [Delivery], concurrency: Int) async throws -> [Double] {
        try await withThrowingTaskGroup(of: Double.self) { group in
            var next = 0
            var latencies: [Double] = []
            latencies.reserveCapacity(deliveries.count)
            func start() {
                let i = next
                let delivery = deliveries[i]
                next += 1
                group.addTask {
                    let t0 = ContinuousClock.now
                    do throws(DeliveryFailure) {
                        _ = try await provider.send(delivery)
                    } catch {
                        throw ValidationError("exchange \(i) failed: \(error.message)")
                    }
                    let d = ContinuousClock.now - t0
                    return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
                }
            }
            for _ in 0..<min(concurrency, deliveries.count) { start() }
            while let latency = try await group.next() {
                latencies.append(latency)
                if next < deliveries.count { start() }
            }
            return latencies
        }
    }

    /// The notification `ha.lua` posts, for a push token of its own, translated for the platform.
    static func delivery(_ i: Int, seed: Int, platform: HAPlatform) throws -> Delivery {
        let token = platform == .ios ? String(format: "%064x", seed * 10_000_000 + i) : "bench-\(seed)-\(i):" + String(repeating: "x", count: 120)
        let n = try HANotification(body: [
            "message": .string("Bench \(i)"), "title": "PushRelay",
            "push_token": .string(token),
            "registration_info": ["app_id": "io.homeassistant.companion.android", "webhook_id": .string("hook-\(i)")],
            "data": ["tag": "bench"],
        ])
        let translated = platform == .ios ? IOSTranslation.translate(n, now: Date()) : AndroidTranslation.translate(n)
        return Delivery(platform: platform, pushToken: token, appID: n.registrationInfo.appID, notification: translated)
    }

    /// This process's CPU time so far (user + system), in seconds.
    static func processCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
