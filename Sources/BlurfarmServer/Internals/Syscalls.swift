// Every system call the server module makes: resolving paths for the roots check. Paths are
// given to the kernel as the bytes they stand for (`PathEncoding.withCString`).
import BlurfarmCore

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
}
