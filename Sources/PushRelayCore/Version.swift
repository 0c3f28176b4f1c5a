/// The PushRelay version reported by `--version`, `/health` tooling and the websocket handshake.
public enum PushRelayVersion {
    public static let string = "0.1.0"
}
