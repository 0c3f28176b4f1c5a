import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a VAPID private key to a file that only its owner can read (mode 0600) from the moment it exists: the file is
/// created with that mode (`open` with `O_EXCL`, then `fchmod`, so the umask cannot widen it), never created wider and
/// narrowed afterwards. Replacing a key writes a new file under a temporary name beside it and renames it over the old
/// one, so the old file's mode is not inherited and a reader sees the old key or the new one, never a part.
public enum VAPIDKeyFile {
    /// A step that failed, with its `errno`.
    public struct WriteError: Error, CustomStringConvertible {
        public let path: String
        public let step: String
        public let code: Int32

        public var description: String { "cannot \(step) '\(path)': \(String(cString: strerror(code)))" }
        /// The file exists and was not to be replaced.
        public var exists: Bool { code == EEXIST }
    }

    /// The mode of a key file.
    public static let mode: mode_t = 0o600

    /// Writes `pem` to `path`, mode 0600 from its creation. Without `replacing`, an existing file is left alone and the
    /// error says so (`WriteError.exists`).
    public static func write(_ pem: String, to path: String, replacing: Bool) throws {
        let bytes = Array(pem.utf8)
        guard replacing else { return try create(path, bytes) }
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UInt32.random(in: .min ... .max)).tmp")
            .path
        try create(temporary, bytes)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw WriteError(path: path, step: "replace", code: code)
        }
    }

    /// Creates `path` (which must not exist) with `mode` and writes `bytes` to it; removes it again if a write fails.
    private static func create(_ path: String, _ bytes: [UInt8]) throws {
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw WriteError(path: path, step: "create", code: errno) }
        var failure: WriteError?
        if fchmod(fd, mode) != 0 { failure = WriteError(path: path, step: "set the mode of", code: errno) }
        var offset = 0
        while failure == nil, offset < bytes.count {
            let n = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n > 0 {
                offset += n
            } else if n < 0, errno != EINTR {
                failure = WriteError(path: path, step: "write", code: errno)
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = WriteError(path: path, step: "write", code: errno) }
        close(fd)
        if let failure {
            unlink(path)
            throw failure
        }
    }
}
