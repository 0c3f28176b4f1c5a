/// The PushRelay version reported by `--version`, `/health` and the websocket handshake (`CHANGELOG.md` lists what
/// each one brought; the commit is `BuildInfo.commit` in PushRelayServer).
public enum PushRelayVersion {
    public static let string = "0.1.0"
}
