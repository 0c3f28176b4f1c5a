import PushRelayConfiguration
import Testing

/// How the sections that name a provider check the name.
@Suite struct ProviderReferencesTests {
    let references = ProviderReferences(["b": .init(name: "b", type: "fcm"), "a": .init(name: "a", type: "apns")])

    @Test func aNameMustBeDefinedAndOfTheRightType() throws {
        let r = ConfigTreeReader(tree: ["x": ["good": "a", "wrong": "b", "missing": "c", "empty": ""]])
        #expect(try references.name(r, "x.good", type: "apns") == "a")
        #expect(try references.name(r, "x.empty", type: "apns") == nil)
        #expect(try references.name(r, "x.unset", type: "apns") == nil)
        #expect(
            configProblem { _ = try references.name(r, "x.wrong", type: "apns") } == "x.wrong: names 'b', a fcm provider; it must be a apns provider"
        )
        #expect(
            configProblem { _ = try references.name(r, "x.missing", type: "apns") }
                == "x.missing: names 'c', which is not defined under 'providers' (defined: a, b)"
        )
        #expect(try references.provider("b", key: "k").type == "fcm")
    }
}
