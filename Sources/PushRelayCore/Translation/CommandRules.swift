/// Which Home Assistant messages are device commands that PushRelay exempts from the daily quota.
public enum ExemptCommands {
    /// Android commands matched exactly; in addition every message starting with `command_` is a command
    /// (this covers `command_launch_app` and `command_beacon_monitor`, which the official relay counts).
    public static let androidExact: Set<String> = [
        "request_location_update", "clear_notification", "remove_channel",
    ]
    public static let androidPrefix = "command_"

    /// iOS commands, honoured only for companion app ids. `kiosk_*` and `test_push_source` are ordinary notifications.
    public static let iOS: Set<String> = [
        "request_location_update", "request_location_updates", "clear_badge", "clear_notification",
        "update_complications", "update_widgets", "delete_alert",
    ]

    /// The command an Android message carries, or nil.
    public static func android(_ message: String?) -> String? {
        guard let m = message else { return nil }
        if androidExact.contains(m) { return m }
        if m.hasPrefix(androidPrefix), m.count > androidPrefix.count { return m }
        return nil
    }

    /// The command an iOS message carries for a companion app, or nil.
    public static func iOS(_ message: String?, isCompanionApp: Bool) -> String? {
        guard isCompanionApp, let m = message, iOS.contains(m) else { return nil }
        return m
    }
}
