import CLibFuzzer
import Foundation
import PushRelayFuzzing

/// The libFuzzer driver: `PUSHRELAY_FUZZ_TARGET=<name> pushrelay-fuzz [libFuzzer flags] [corpus folders]` fuzzes one
/// `FuzzTarget` (see `scripts/fuzz`). SwiftPM gives an executable a main of its own, so this main hands control to
/// libFuzzer's driver rather than linking libFuzzer's main.
@main
enum FuzzEntry {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzTestOneInput))
    }
}

/// One input. Exported under libFuzzer's name too, which its runtime refers to.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzTarget.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

/// The target this process fuzzes, named by `PUSHRELAY_FUZZ_TARGET`.
let fuzzTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["PUSHRELAY_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        fatalError("set PUSHRELAY_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    return target
}()
