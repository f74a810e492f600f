// Every system call the server module makes: resolving paths for the roots check (paths are
// given to the kernel as the bytes they stand for: `PathEncoding.withCString`), and giving
// freed memory back to the system.
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

    /// Gives the memory the allocator holds free back to the system (`malloc_trim(0)`: every
    /// arena, not only the top of the main heap). A job's images are decoded, rendered and
    /// encoded on threads of their own, and glibc keeps what they freed in per-thread arenas
    /// for them: a server that runs for months asks for it back when a job ends.
    static func returnFreedMemory() {
        _ = malloc_trim(0)
    }
}
