import ArgumentParser
import Foundation
import PushRelayServer

/// `pushrelay import-sygnal-config sygnal.yaml`.
struct ImportSygnalConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-sygnal-config",
        abstract: "Convert a Sygnal config's apps: into PushRelay providers: and matrix.apps: (YAML on stdout)."
    )

    @Argument(help: "The Sygnal config file (sygnal.yaml).") var file: String

    func run() throws {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw ValidationError("cannot read '\(file)': \(error.localizedDescription)")
        }
        do {
            print(try SygnalConfigImport.convert(yaml: text, source: file), terminator: "")
        } catch let e as SygnalConfigImport.Failure {
            throw ValidationError(e.description)
        }
    }
}
