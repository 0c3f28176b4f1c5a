import PushRelayConfiguration
import PushRelayCore
import Testing

/// Each config key is declared once, with whether a `PUSHRELAY_*` variable sets it: the unknown-key check and the
/// environment overrides both follow that one table, and every declared variable reaches its key's reader.
@Suite struct ConfigKeyTests {
    /// Every key of the table as it is written dotted (`http.port`, `storage.postgres.url`, `apps`), with whether its
    /// variable sets it.
    static let declared: [(key: String, fromEnvironment: Bool)] = PushRelayConfig.sections.flatMap { section in
        switch section.content {
        case .value: [(section.name, true)]
        case .keys(let keys): keys.map { ("\(section.name).\($0.name)", $0.fromEnvironment) }
        }
    }

    @Test func everyKeyTheFileAcceptsIsSetByItsVariableUnlessDeclaredFileOnly() {
        let overridable = Set(PushRelayConfig.overridableKeys)
        let fileOnly = Set(Self.declared.filter { !$0.fromEnvironment }.map(\.key))
        var accepted: [String] = []
        for (section, names) in PushRelayConfig.knownKeys where !section.isEmpty {
            let keys = PushRelayConfig.sections.first { $0.name == section }?.keys ?? []
            for name in names {
                let nested = keys.names(in: name)
                accepted += nested.isEmpty ? ["\(section).\(name)"] : nested.map { "\(section).\(name).\($0)" }
            }
        }
        for value in PushRelayConfig.sections where value.keys.isEmpty { accepted.append(value.name) }
        #expect(accepted.count > 50, "the table was read: \(accepted.count) keys")
        for key in accepted {
            #expect(overridable.contains(key) != fileOnly.contains(key), "\(key): set by its variable, or declared file-only (not both)")
        }
        #expect(overridable.isSubset(of: Set(Self.declared.map(\.key))), "every overridable key is declared")
    }

    @Test func theVariablesOfTheFileOnlySectionsAreTheOnesLeftOut() {
        let fileOnly = Set(Self.declared.filter { !$0.fromEnvironment }.map { String($0.key.prefix { $0 != "." }) })
        #expect(fileOnly == ["calls", "voip", "relay", "matrix"])
    }

    /// Each variable reaches its key's reader: a value no reader accepts (a list holding a list) is refused naming the
    /// key. A file-only key's variable is not read at all.
    @Test func everyVariableIsReadByItsKeysReaderAndNoOther() {
        for (key, fromEnvironment) in Self.declared {
            var environment = [PushRelayConfig.environmentVariable(for: key): "[[]]"]
            if key.hasPrefix("storage.postgres.") {
                // Read only with the PostgreSQL backend, which needs a URL.
                environment[PushRelayConfig.environmentVariable(for: "storage.backend")] = "postgres"
                if key != "storage.postgres.url" {
                    environment[PushRelayConfig.environmentVariable(for: "storage.postgres.url")] = "postgres://u@db/pushrelay"
                }
            }
            let problem = configProblem { _ = try PushRelayConfig.load(file: nil, environment: environment) }
            if fromEnvironment {
                // Refused by the key's own reader, not as an unknown key.
                #expect(
                    (problem.hasPrefix("\(key): ") || problem.hasPrefix("\(key)[")) && !problem.contains("unknown key"),
                    "\(PushRelayConfig.environmentVariable(for: key)) is read as \(key): \(problem)"
                )
            } else {
                #expect(problem == "accepted", "\(PushRelayConfig.environmentVariable(for: key)) is not read: \(problem)")
            }
        }
    }

    @Test func aNestedSectionsKeysAreNamedUnderIt() {
        let storage: [ConfigKey] = ["backend", "postgres.url", .fileOnly("postgres.tls")]
        #expect(storage.names() == ["backend", "postgres"])
        #expect(storage.names(in: "postgres") == ["url", "tls"])
        #expect(storage.names(in: "backend").isEmpty)
        #expect(ConfigSection.section("storage", storage).overridableKeys == ["storage.backend", "storage.postgres.url"])
        #expect(ConfigSection.value("apps").overridableKeys == ["apps"])
    }
}
