import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` into the target before each build: the commit the package was built from
/// (`git rev-parse --short=12 HEAD`, with `-dirty` when the work tree has uncommitted changes; `unknown` outside a git
/// checkout, as in a container build without `.git`). The file is rewritten only when its text changes, so an
/// unchanged commit recompiles nothing.
@main
struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildInfo")
        let package = context.package.directoryURL.path(percentEncoded: false)
        let script = """
            set -e
            mkdir -p "$1"
            commit=$(git -C "$2" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
            if [ "$commit" != unknown ] && [ -n "$(git -C "$2" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
              commit="$commit-dirty"
            fi
            tmp="$1/BuildInfo.swift.tmp"
            printf '%s\\n' '// Generated at build time by BuildInfoPlugin.' '' \\
              '/// What this binary was built from.' 'public enum BuildInfo {' \\
              '    /// The git commit (12 hex digits, `-dirty` with uncommitted changes), or `unknown`.' \\
              "    public static let commit = \\"$commit\\"" '}' > "$tmp"
            if cmp -s "$tmp" "$1/BuildInfo.swift"; then rm "$tmp"; else mv "$tmp" "$1/BuildInfo.swift"; fi
            """
        return [
            .prebuildCommand(
                displayName: "Stamping the build with its git commit",
                executable: URL(filePath: "/bin/sh"),
                arguments: ["-c", script, "build-info", output.path(percentEncoded: false), package],
                outputFilesDirectory: output
            )
        ]
    }
}
