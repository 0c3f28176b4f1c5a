/// Push tokens are secrets: logs and listings show them shortened.
public enum TokenDisplay {
    /// `abcdef…uvwxyz` for long tokens; short tokens keep only their first 4 characters.
    public static func short(_ token: String) -> String {
        if token.count <= 16 { return String(token.prefix(4)) + "…" }
        return String(token.prefix(6)) + "…" + String(token.suffix(6))
    }
}
