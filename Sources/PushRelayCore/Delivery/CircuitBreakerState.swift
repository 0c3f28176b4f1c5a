import Foundation

/// When to stop calling a provider that fails most requests, and when to try it again. Pure: the caller passes the
/// time and reports outcomes.
///
/// Closed: every delivery goes through; outcomes are counted in a window of `window` seconds. When at least
/// `minimumRequests` were counted and `failureRatio` of them failed transiently, it opens. Open: deliveries are refused
/// until `coolDown` has passed. Then one probe goes through (half-open): its success closes the breaker, its failure
/// opens it again. A probe that never reports (refused later by the quota, say) is replaced after `probeTimeout`.
public struct CircuitBreakerState: Sendable {
    public struct Settings: Sendable, Equatable {
        public var failureRatio: Double
        public var minimumRequests: Int
        public var window: TimeInterval
        public var coolDown: TimeInterval
        public var probeTimeout: TimeInterval

        public init(
            failureRatio: Double = 0.5,
            minimumRequests: Int = 20,
            window: TimeInterval = 30,
            coolDown: TimeInterval = 30,
            probeTimeout: TimeInterval = 15
        ) {
            self.failureRatio = failureRatio
            self.minimumRequests = minimumRequests
            self.window = window
            self.coolDown = coolDown
            self.probeTimeout = probeTimeout
        }
    }

    public enum Phase: Equatable, Sendable {
        case closed
        case open(until: Date)
        case halfOpen(probeSince: Date)
    }

    public enum Admission: Equatable, Sendable {
        case allow
        /// The one delivery that tests an open breaker after its cool-down.
        case probe
        /// Refused without calling the provider; try again in `retryAfter` seconds.
        case refuse(retryAfter: Int, failures: Int, requests: Int)
    }

    /// How a delivery went, as far as the provider's health goes.
    public enum Report: Sendable {
        /// The provider answered (delivered, or refused the message or token: it is up).
        case healthy
        /// A transient failure: timeout, reset, 5xx, 429.
        case failed
    }

    public enum Transition: Equatable, Sendable {
        case opened(failures: Int, requests: Int)
        case closed
    }

    public let settings: Settings
    public private(set) var phase: Phase = .closed
    private var windowStart: Date?
    private var requests = 0
    private var failures = 0
    /// The figures that opened it, for the refusal's message.
    private var openedWith = (failures: 0, requests: 0)

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    public mutating func admit(now: Date) -> Admission {
        switch phase {
        case .closed:
            return .allow
        case .open(let until):
            guard now >= until else {
                return .refuse(
                    retryAfter: max(1, Int((until.timeIntervalSince(now)).rounded(.up))),
                    failures: openedWith.failures,
                    requests: openedWith.requests
                )
            }
            phase = .halfOpen(probeSince: now)
            return .probe
        case .halfOpen(let since):
            guard now.timeIntervalSince(since) >= settings.probeTimeout else {
                return .refuse(retryAfter: 1, failures: openedWith.failures, requests: openedWith.requests)
            }
            phase = .halfOpen(probeSince: now)
            return .probe
        }
    }

    public mutating func record(_ report: Report, now: Date) -> Transition? {
        switch phase {
        case .open:
            return nil
        case .halfOpen:
            switch report {
            case .healthy:
                phase = .closed
                resetWindow(now)
                return .closed
            case .failed:
                phase = .open(until: now.addingTimeInterval(settings.coolDown))
                return .opened(failures: openedWith.failures, requests: openedWith.requests)
            }
        case .closed:
            if let start = windowStart, now.timeIntervalSince(start) < settings.window {
                requests += 1
            } else {
                resetWindow(now)
                requests = 1
            }
            if case .failed = report { failures += 1 }
            guard requests >= settings.minimumRequests, Double(failures) >= settings.failureRatio * Double(requests) else { return nil }
            openedWith = (failures, requests)
            phase = .open(until: now.addingTimeInterval(settings.coolDown))
            resetWindow(now)
            return .opened(failures: openedWith.failures, requests: openedWith.requests)
        }
    }

    private mutating func resetWindow(_ now: Date) {
        windowStart = now
        requests = 0
        failures = 0
    }
}
