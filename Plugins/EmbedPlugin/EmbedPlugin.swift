import Foundation
import PackagePlugin

/// Generates the Swift files that carry text files in the binary, from the files themselves:
/// - PushRelaySQLite: `EmbeddedMigrations.swift` from `migrations/*.sql`;
/// - PushRelayPostgres: `EmbeddedPostgresMigrations.swift` from `migrations/postgres/*.sql`;
/// - PushRelayServer: `OpenAPIDocument.swift` from `docs/openapi.yaml`;
/// - PushRelayAdmin: `ConsoleAssets.swift` from `console/`.
/// The scripts in `scripts/embed-*.sh` write them (only when their text changes, so an unchanged file recompiles
/// nothing); nothing generated is checked in. SwiftPM runs them when it plans a build: the first one, and one after
/// `Package.swift` changed. After an edit to the embedded files alone, `touch Package.swift` makes the next build embed
/// it. Any other file in a target's output folder (one a build of an older checkout generated there, before the file
/// moved to another target) is removed first: SwiftPM compiles every file in that folder.
@main
struct EmbedPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        // Each step: a script in scripts/, its arguments before the output directory, and the file it writes there.
        let steps: [(script: String, arguments: [String], file: String)]
        switch target.name {
        case "PushRelaySQLite": steps = [("embed-migrations.sh", ["sqlite"], "EmbeddedMigrations.swift")]
        case "PushRelayPostgres": steps = [("embed-migrations.sh", ["postgres"], "EmbeddedPostgresMigrations.swift")]
        case "PushRelayServer": steps = [("embed-openapi.sh", [], "OpenAPIDocument.swift")]
        case "PushRelayAdmin": steps = [("embed-console.sh", [], "ConsoleAssets.swift")]
        default: return []
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "Embedded")
        let package = context.package.directoryURL.path(percentEncoded: false)
        // $1: the output directory, $2: the package.
        let lines = steps.map { step in
            (["/bin/bash", "\"$2/scripts/\(step.script)\""] + step.arguments + ["\"$1\"", ">/dev/null"]).joined(separator: " ")
        }
        let written = steps.map(\.file).joined(separator: "|")
        let stale = "for f in \"$1\"/*; do case \"${f##*/}\" in \(written)) ;; *) rm -rf \"$f\" ;; esac; done"
        let script = (["set -e", "mkdir -p \"$1\"", stale] + lines).joined(separator: "\n")
        return [
            .prebuildCommand(
                displayName: "Embedding \(target.name)'s text files",
                executable: URL(filePath: "/bin/sh"),
                arguments: ["-c", script, "embed", output.path(percentEncoded: false), package],
                outputFilesDirectory: output
            )
        ]
    }
}
