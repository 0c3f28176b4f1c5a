import ArgumentParser
import Foundation
import Logging
import PushRelayCore
import PushRelayDoctor

/// `pushrelay doctor`: the setup checked, each failure with what to do about it.
struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the configuration, the storage and each provider's credentials against its push service (nothing is delivered).",
        discussion: "Exits 0 only when every check passes."
    )
    @OptionGroup var options: ConfigOption
    @Flag(help: "Print JSON.") var json = false
    @Option(help: "A device's push token: also try one notification for it (FCM checks it without delivering it).") var token: String?
    @Option(
        help:
            "With --token: the app id the device registered with, which picks its route and, for an id in ios.companion_app_ids, the iOS translation (without it, only an 'apps' entry matching \"*\" routes the token)."
    ) var app: String?
    @Flag(help: "With --token: deliver the notification for real (the only check APNs offers).") var send = false

    func validate() throws {
        if token == nil && (app != nil || send) { throw ValidationError("--app and --send go with --token") }
    }

    func run() async throws {
        var checks: [SetupCheck]
        do {
            let config = try options.load()
            checks = [
                SetupCheck(
                    subject: "config",
                    check: "load",
                    passed: true,
                    detail: options.config ?? "the embedded defaults and PUSHRELAY_* variables"
                )
            ]
            let logger = {
                var logger = Logger(label: "pushrelay.doctor")
                logger.logLevel = .critical
                return logger
            }()
            checks += await SetupDoctor.run(
                config,
                openStorage: { try await StorageOpener.open(config.storage, schema: .check, logger: logger) },
                logger: logger
            )
            if let token {
                checks += await SetupDoctor.tryToken(token, appID: app, send: send, config: config, logger: logger)
            }
        } catch {
            checks = [
                SetupCheck(
                    subject: "config",
                    check: "load",
                    passed: false,
                    detail: "\(error)",
                    remedy: "Fix the key the message names (docs/configuration.md lists every key)."
                )
            ]
        }
        if json {
            print(JSONWriter.string(SetupCheck.report(checks)))
        } else {
            for c in checks {
                print("\(c.passed ? "ok  " : "FAIL") \(c.subject): \(c.check): \(c.detail)")
                if let remedy = c.remedy, !c.passed { print("     → \(remedy)") }
            }
            let failed = checks.filter { !$0.passed }.count
            print(failed == 0 ? "every check passed" : "\(failed) check\(failed == 1 ? "" : "s") failed")
        }
        if !checks.allSatisfy(\.passed) { throw ExitCode.failure }
    }
}
