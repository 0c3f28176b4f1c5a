import Foundation
import PushRelayTestHarness

/// A small tmpfs mounted for one test, to give the server a disk that really fills up. Needs root (CAP_SYS_ADMIN), as
/// `scripts/test` and CI run; `available` says whether this machine allows it.
package struct TmpfsMount {
    package let path: String

    /// Whether a tmpfs can be mounted here (checked once, by mounting and unmounting one).
    package static let available: Bool = {
        guard let probe = try? TmpfsMount(sizeKiB: 64) else { return false }
        probe.unmount()
        return true
    }()

    package init(sizeKiB: Int) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("pushrelay-tmpfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let out = try ProcessSpawn.runBlocking(["mount", "-t", "tmpfs", "-o", "size=\(sizeKiB)k", "tmpfs", path])
        guard out.status == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw ProcessSpawn.SpawnFailed(description: "mount tmpfs: \(out.stderr)")
        }
    }

    /// Writes a file that takes every free byte left (the write stops at ENOSPC).
    package func fill(name: String = "filler") {
        guard let handle = fopen(path + "/" + name, "w") else { return }
        let chunk = [UInt8](repeating: 0x55, count: 4096)
        while fwrite(chunk, 1, chunk.count, handle) == chunk.count, fflush(handle) == 0 {}
        fclose(handle)
    }

    package func remove(name: String = "filler") {
        try? FileManager.default.removeItem(atPath: path + "/" + name)
    }

    package func unmount() {
        _ = try? ProcessSpawn.runBlocking(["umount", "-l", path])
        try? FileManager.default.removeItem(atPath: path)
    }
}
