#if canImport(Glibc)
import Glibc
#endif

/// The system calls of BlurfarmCore.
enum Syscalls {
    /// What a new thread runs, handed through `pthread_create`'s argument.
    private final class ThreadBody {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Starts a detached thread with a stack of `stackSize` bytes running `body`; the error
    /// number of `pthread_create` when it cannot (`EAGAIN`: the process or its user may have no
    /// more threads).
    static func startThread(stackSize: Int, _ body: @escaping @Sendable () -> Void) -> Int32? {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN)))
        let argument = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { argument in
            let started = Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue()
            started.body()
            return nil
        }, argument)
        guard result == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(argument).release()
            return result
        }
        return nil
    }
}
