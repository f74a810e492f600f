// Every system call the server module makes: resolving paths for the roots check (paths are
// given to the kernel as the bytes they stand for: `PathEncoding.withCString`), closing a file
// opened beneath them, giving freed memory back to the system, and the descriptor limit its
// connections count against.
import BlurfarmCore
import CSystemShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

enum Syscalls {
    /// `path` with every link, `.` and `..` resolved (`realpath`); nil when it does not exist
    /// (or cannot be resolved: a folder on the way that cannot be searched).
    static func realPath(_ path: String) -> String? {
        PathEncoding.withCString(path) { pointer -> String? in
            guard let resolved = realpath(pointer, nil) else { return nil }
            defer { free(resolved) }
            let length = strlen(resolved)
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(resolved).assumingMemoryBound(to: UInt8.self), count: length)
            return PathEncoding.decode(bytes).text
        }
    }

    static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// Gives the memory the allocator holds free back to the system (`malloc_trim(0)`: every
    /// arena, not only the top of the main heap). A job's images are decoded, rendered and
    /// encoded on threads of their own, and glibc keeps what they freed in per-thread arenas
    /// for them: a server that runs for months asks for it back when a job ends.
    static func returnFreedMemory() {
        _ = malloc_trim(0)
    }

    /// This process's soft limit of open descriptors, nil when unlimited; with `raise`, first
    /// raised to the hard limit (a server holds a descriptor per connection; the default soft
    /// limit of 1024 is the kernel's old `select` bound, not a policy).
    static func descriptorLimit(raise: Bool) -> Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if raise, limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur == rlim_t.max ? nil : Int(clamping: limit.rlim_cur)
    }
}
