import Foundation
import PushRelayCore

/// A Home Assistant notify body through the request model and every translation the notify path makes.
enum HomeAssistantNotifyFuzzing {
    static func run(_ bytes: [UInt8]) {
        guard let body = try? JSONParser.parse(bytes), let notification = try? HANotification(body: body) else { return }
        let android = AndroidTranslation.translate(notification)
        JSONBodyFuzzing.roundTrip(android.fcmMessage)
        let ios = IOSTranslation.translate(notification, now: Date(timeIntervalSince1970: 1_790_000_000))
        if let apns = ios.apns { JSONBodyFuzzing.roundTrip(apns.payload) }
        JSONBodyFuzzing.roundTrip(PushChannelWire.notificationEvent(notification, confirmID: "fuzz"))
    }
}
