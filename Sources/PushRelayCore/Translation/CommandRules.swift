/// Which Home Assistant messages are device commands that PushRelay exempts from the daily quota.
public enum ExemptCommands {
    /// Android commands, matched exactly: the official relay's list (`android.js`). `command_launch_app` and
    /// `command_beacon_monitor` are not on it and are counted, as the relay counts them; so is any other message.
    public static let androidExact: Set<String> = [
        "request_location_update", "clear_notification", "remove_channel",
        "command_dnd", "command_ringer_mode", "command_broadcast_intent", "command_volume_level",
        "command_screen_on", "command_bluetooth", "command_high_accuracy_mode",
        "command_activity", "command_app_lock", "command_webview", "command_media",
        "command_update_sensors", "command_ble_transmitter", "command_persistent_connection", "command_stop_tts",
        "command_auto_screen_brightness", "command_screen_brightness_level", "command_screen_off_timeout",
        "command_flashlight", "command_wake_word_detection",
    ]

    /// iOS commands, honoured only for companion app ids. `kiosk_*` and `test_push_source` are ordinary notifications.
    public static let iOS: Set<String> = [
        "request_location_update", "request_location_updates", "clear_badge", "clear_notification",
        "update_complications", "update_widgets", "delete_alert",
    ]

    /// The command an Android message carries, or nil.
    public static func android(_ message: String?) -> String? {
        guard let m = message, androidExact.contains(m) else { return nil }
        return m
    }

    /// The command an iOS message carries for a companion app, or nil.
    public static func iOS(_ message: String?, isCompanionApp: Bool) -> String? {
        guard isCompanionApp, let m = message, iOS.contains(m) else { return nil }
        return m
    }
}
