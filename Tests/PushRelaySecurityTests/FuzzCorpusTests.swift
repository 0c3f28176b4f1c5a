import Foundation
import PushRelayCore
import PushRelayFuzzing
import PushRelayTestHarness
import Testing

/// The fuzz targets in every `swift test`: each committed corpus and regression input (`Fuzz/Corpus/<target>/`,
/// `Fuzz/Regressions/<target>/`: inputs that once broke something) runs through the same code libFuzzer drives in
/// `scripts/fuzz`, then a few thousand seeded mutations of them. A broken invariant stops the process, so the run
/// fails; the mutation seed is printed to replay it.
///
/// AddressSanitizer: the fuzz targets' corpora and their mutations, through every parser of strangers' bytes.
@Suite struct FuzzCorpusTests {
    static let mutationsPerTarget = 3000

    @Test(arguments: FuzzTarget.allCases)
    func corpusAndRegressionsRunClean(target: FuzzTarget) throws {
        let inputs = try Self.inputs(of: target)
        #expect(!inputs.corpus.isEmpty, "Fuzz/Corpus/\(target.rawValue) has seed inputs")
        for input in inputs.corpus + inputs.regressions { target.run(input) }
    }

    @Test(arguments: FuzzTarget.allCases)
    func seededMutationsRunClean(target: FuzzTarget) throws {
        let seeds = try Self.inputs(of: target).corpus
        let seed = UInt64(target.rawValue.utf8.reduce(5381) { ($0 &* 33) &+ Int($1) }.magnitude)
        print("FuzzCorpusTests \(target.rawValue): mutation seed \(seed)")
        var random = SeededRandom(seed: seed)
        for _ in 0..<Self.mutationsPerTarget {
            var input = seeds.randomElement(using: &random) ?? []
            for _ in 0...Int.random(in: 0..<4, using: &random) { Self.mutate(&input, &random) }
            target.run(input)
        }
    }

    static func inputs(of target: FuzzTarget) throws -> (corpus: [[UInt8]], regressions: [[UInt8]]) {
        func read(_ folder: String) throws -> [[UInt8]] {
            let dir = RepositoryRoot.url.appendingPathComponent("Fuzz/\(folder)/\(target.rawValue)")
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { return [] }
            return try names.sorted().map { Array(try Data(contentsOf: dir.appendingPathComponent($0))) }
        }
        return (try read("Corpus"), try read("Regressions"))
    }

    /// One of libFuzzer's simpler mutations: flip, insert, delete, duplicate or overwrite with an interesting byte.
    static func mutate(_ input: inout [UInt8], _ r: inout SeededRandom) {
        let interesting: [UInt8] = [0, 0x7f, 0x80, 0xff, UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "{"), UInt8(ascii: "["), 10]
        guard !input.isEmpty else {
            input = [interesting.randomElement(using: &r)!]
            return
        }
        let at = Int.random(in: 0..<input.count, using: &r)
        switch Int.random(in: 0..<5, using: &r) {
        case 0: input[at] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &r)
        case 1: input.insert(interesting.randomElement(using: &r)!, at: at)
        case 2: input.removeSubrange(at..<min(input.count, at + Int.random(in: 1...16, using: &r)))
        case 3: input.insert(contentsOf: input[at..<min(input.count, at + 32)], at: at)
        default: input[at] = interesting.randomElement(using: &r)!
        }
    }
}

extension FuzzTarget: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
}
