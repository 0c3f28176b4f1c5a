import PushRelayCore

/// A Matrix push gateway body through the notification model and the per-device translations.
enum MatrixNotifyFuzzing {
    static func run(_ bytes: [UInt8]) {
        guard let body = try? JSONParser.parse(bytes), let notification = try? MatrixNotification(body: body) else { return }
        for device in notification.devices.prefix(8) {
            _ = MatrixFCMTranslation.translate(notification, device: device)
            _ = MatrixAPNsTranslation.translate(notification, device: device)
            _ = MatrixWebPushTranslation.translate(notification, device: device)
            _ = notification.only(device)
        }
    }
}
