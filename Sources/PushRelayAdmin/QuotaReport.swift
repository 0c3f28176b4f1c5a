import Foundation
import PushRelayCore
import PushRelayStore

/// Text and JSON renderings of quota data for the CLI (`pushrelay quota …`).
public enum QuotaReport {
    public static func table(_ rows: [UsageRow], policy: QuotaPolicy, fullTokens: Bool) -> String {
        var lines = [["DAY", "TOKEN", "APP", "SUCCESSFUL", "ERRORS", "ATTEMPTS", "MAXIMUM", "REMAINING", "NOTICE"]]
        for r in rows {
            let maximum = policy.maximum(appID: r.appID, override: r.limitOverride)
            lines.append([
                r.day, fullTokens ? r.pushToken : TokenDisplay.short(r.pushToken), r.appID ?? "-",
                String(r.successful), String(r.errors), String(r.attempts),
                String(maximum) + (r.limitOverride != nil ? "*" : ""), String(max(0, maximum - r.successful)),
                r.noticeSent ? "sent" : "-",
            ])
        }
        return align(lines) + (rows.isEmpty ? "(no usage recorded for this day)\n" : "")
    }

    public static func json(_ rows: [UsageRow], policy: QuotaPolicy, fullTokens: Bool) -> String {
        let items: [JSONValue] = rows.map { r in
            let maximum = policy.maximum(appID: r.appID, override: r.limitOverride)
            return [
                "day": .string(r.day),
                "target": .string(fullTokens ? r.pushToken : TokenDisplay.short(r.pushToken)),
                "appId": r.appID.map(JSONValue.string) ?? .null,
                "attempts": .int(Int64(r.attempts)), "successful": .int(Int64(r.successful)), "errors": .int(Int64(r.errors)),
                "total": .int(Int64(r.counters.total)), "maximum": .int(Int64(maximum)),
                "remaining": .int(Int64(max(0, maximum - r.successful))),
                "limitOverride": r.limitOverride.map { .int(Int64($0)) } ?? .null,
                "noticeSent": .bool(r.noticeSent),
            ]
        }
        return JSONValue.array(items).jsonString(pretty: true) + "\n"
    }

    static func align(_ rows: [[String]]) -> String {
        guard let first = rows.first else { return "" }
        var widths = Array(repeating: 0, count: first.count)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        return rows.map { r in
            r.enumerated().map { i, c in i == r.count - 1 ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
