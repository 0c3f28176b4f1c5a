#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`, used where `Synchronization.Mutex` would do.
///
/// On Linux, `Mutex` waits on a futex that ThreadSanitizer does not see, so every access it guards is reported as a
/// race; a pthread mutex is intercepted, so `scripts/sanitize thread` reports only real races. Keep critical sections
/// short and never `await` inside one. A lock that guards no value takes a number, not `()`: a value of size zero has
/// the mutex pointer's address, which ThreadSanitizer then reports as raced.
public final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    public init(_ value: Value) {
        self.value = value
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
