/// One verdict of `pushrelay doctor`: what was checked, whether it passed, what was found, and, when it failed, what
/// to do about it.
public struct SetupCheck: Sendable, Equatable {
    /// What was checked: `config`, `storage`, or `providers.<name>`.
    public var subject: String
    /// The check itself, in a few words ("OAuth access token", "free disk").
    public var check: String
    public var passed: Bool
    /// What was found (the value, or the error as the service put it).
    public var detail: String
    /// What to do, for a check that failed.
    public var remedy: String?

    public init(subject: String, check: String, passed: Bool, detail: String, remedy: String? = nil) {
        self.subject = subject
        self.check = check
        self.passed = passed
        self.detail = detail
        self.remedy = remedy
    }
}

extension SetupCheck {
    /// `{"subject", "check", "passed", "detail", "remedy"?}`.
    public var json: JSONValue {
        var o: [String: JSONValue] = ["subject": .string(subject), "check": .string(check), "passed": .bool(passed), "detail": .string(detail)]
        if let remedy { o["remedy"] = .string(remedy) }
        return .object(o)
    }

    /// `{"passed": every check passed, "checks": [...]}`: what `pushrelay doctor --json` prints and the admin API answers.
    public static func report(_ checks: [SetupCheck]) -> JSONValue {
        ["passed": .bool(checks.allSatisfy(\.passed)), "checks": .array(checks.map(\.json))]
    }
}

/// A provider that can check its own setup against its push service without delivering anything.
public protocol SelfChecking: Sendable {
    /// The checks of this provider instance, in order; each one passed or failed with its remedy.
    func selfCheck() async -> [SetupCheck]
}
