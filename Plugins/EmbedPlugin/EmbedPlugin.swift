import Foundation
import PackagePlugin

/// Generates the Swift files that carry text files in the binary, from the files themselves:
/// - PushRelaySQLite: `EmbeddedMigrations.swift` from `migrations/*.sql`;
/// - PushRelayPostgres: `EmbeddedPostgresMigrations.swift` from `migrations/postgres/*.sql`;
/// - PushRelayServer: `OpenAPIDocument.swift` from `docs/openapi.yaml`;
/// - PushRelayAdmin: `ConsoleAssets.swift` from `console/`.
/// The scripts in `scripts/embed-*.sh` write them (only when their text changes, so an unchanged file recompiles
/// nothing); nothing generated is checked in. Each is a build command whose inputs are the script, the embedded files
/// and their folder (whose time changes when a file is added or removed), so any build after an edit, a new migration
/// or a `git pull` embeds them again. Only the file a command declares is compiled into its target, whatever else a
/// build of an older checkout left in the output folder.
@main
struct EmbedPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        // A script in scripts/, its arguments before the output directory, the file it writes there, and what it reads
        // (a folder or a file of the package).
        let step: (script: String, arguments: [String], file: String, reads: String)
        switch target.name {
        case "PushRelaySQLite": step = ("embed-migrations.sh", ["sqlite"], "EmbeddedMigrations.swift", "migrations")
        case "PushRelayPostgres":
            step = ("embed-migrations.sh", ["postgres"], "EmbeddedPostgresMigrations.swift", "migrations/postgres")
        case "PushRelayServer": step = ("embed-openapi.sh", [], "OpenAPIDocument.swift", "docs/openapi.yaml")
        case "PushRelayAdmin": step = ("embed-console.sh", [], "ConsoleAssets.swift", "console")
        default: return []
        }
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "Embedded")
        let script = package.appending(path: "scripts/\(step.script)")
        let read = package.appending(path: step.reads)
        var inputs = [script, read]
        if let names = try? FileManager.default.contentsOfDirectory(atPath: read.path(percentEncoded: false)) {
            inputs += names.sorted().map { read.appending(path: $0) }
        }
        // $1: the output directory.
        let command = (["mkdir -p \"$1\" &&", "/bin/bash", "\"\(script.path(percentEncoded: false))\""] + step.arguments + ["\"$1\"", ">/dev/null"])
            .joined(separator: " ")
        return [
            .buildCommand(
                displayName: "Embedding \(step.reads) into \(target.name)",
                executable: URL(filePath: "/bin/sh"),
                arguments: ["-c", command, "embed", output.path(percentEncoded: false)],
                inputFiles: inputs,
                outputFiles: [output.appending(path: step.file)]
            )
        ]
    }
}
