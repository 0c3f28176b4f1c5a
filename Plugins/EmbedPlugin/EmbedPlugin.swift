import Foundation
import PackagePlugin

/// Generates, before each build, the Swift files that carry text files in the binary, from the files themselves:
/// - PushRelaySQLite: `EmbeddedMigrations.swift` from `migrations/*.sql`;
/// - PushRelayPostgres: `EmbeddedPostgresMigrations.swift` from `migrations/postgres/*.sql`;
/// - PushRelayServer: `OpenAPIDocument.swift` from `docs/openapi.yaml`;
/// - PushRelayAdmin: `ConsoleAssets.swift` from `console/`.
/// The scripts in `scripts/embed-*.sh` write them (only when their text changes, so an unchanged file recompiles
/// nothing); nothing generated is checked in.
@main
struct EmbedPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        // Each step: a script in scripts/ and its arguments before the output directory.
        let steps: [(script: String, arguments: [String])]
        switch target.name {
        case "PushRelaySQLite": steps = [("embed-migrations.sh", ["sqlite"])]
        case "PushRelayPostgres": steps = [("embed-migrations.sh", ["postgres"])]
        case "PushRelayServer": steps = [("embed-openapi.sh", [])]
        case "PushRelayAdmin": steps = [("embed-console.sh", [])]
        default: return []
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "Embedded")
        let package = context.package.directoryURL.path(percentEncoded: false)
        // $1: the output directory, $2: the package.
        let lines = steps.map { step in
            (["/bin/bash", "\"$2/scripts/\(step.script)\""] + step.arguments + ["\"$1\"", ">/dev/null"]).joined(separator: " ")
        }
        let script = (["set -e", "mkdir -p \"$1\""] + lines).joined(separator: "\n")
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
