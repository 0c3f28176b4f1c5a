/// The parsers PushRelay runs on bytes from strangers, as fuzz targets: each takes arbitrary bytes, must return
/// without crashing, and checks what must hold of whatever it parsed (a re-encoding parses back to the same value).
///
/// `scripts/fuzz` runs each under libFuzzer with AddressSanitizer (`pushrelay-fuzz`, built with `PUSHRELAY_FUZZ=1`);
/// `FuzzCorpusTests` replays the committed corpora and regressions (`Fuzz/Corpus/<name>/`) through the same code in
/// every `swift test`.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A Home Assistant notify body: JSON, the request model, both translations and the websocket event.
    case homeAssistantNotify = "ha-notify"
    /// A Matrix push gateway body: JSON, the notification model and the FCM, APNs and WebPush translations.
    case matrixNotify = "matrix-notify"
    /// A WebPush relay request: the path, the headers and the APNs and FCM payloads built from the body.
    case webPushRelay = "webpush-relay"
    /// An aes128gcm WebPush body (RFC 8188 header, records) opened with a fixed receiver key.
    case webPushBody = "webpush-body"
    /// A message from a websocket push-channel client.
    case pushChannelMessage = "channel-message"
    /// A websocket push-channel client's byte stream: frames, fragments, control frames, then its messages.
    case webSocketFrames = "websocket-frames"
    /// The YAML configuration: the YAML tree and the validated configuration.
    case yamlConfig = "yaml-config"
    /// A JSON body of the admin, devices and calls APIs: the parser, then a write that parses back equal.
    case jsonBody = "json-body"

    /// Runs the target on one input. Returns normally for every input; a broken invariant stops the process.
    public func run(_ bytes: [UInt8]) {
        switch self {
        case .homeAssistantNotify: HomeAssistantNotifyFuzzing.run(bytes)
        case .matrixNotify: MatrixNotifyFuzzing.run(bytes)
        case .webPushRelay: WebPushRelayFuzzing.run(bytes)
        case .webPushBody: WebPushBodyFuzzing.run(bytes)
        case .pushChannelMessage: PushChannelMessageFuzzing.run(bytes)
        case .webSocketFrames: WebSocketFramesFuzzing.run(bytes)
        case .yamlConfig: YAMLConfigFuzzing.run(bytes)
        case .jsonBody: JSONBodyFuzzing.run(bytes)
        }
    }
}
