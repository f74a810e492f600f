// Every system call the server module makes: resolving paths for the roots check and opening
// files beneath a root (paths are given to the kernel as the bytes they stand for:
// `PathEncoding.withCString`), giving freed memory back to the system, and the descriptor limit
// its connections count against.
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

    /// Why a file beneath a root could not be opened.
    enum OpenRefusal: Error {
        /// Resolving it left the root (a link, `..`, a magic link).
        case outside
        /// It is not a regular file: its `st_mode`.
        case notRegular(mode_t)
        /// The system's reason.
        case failed(String)
    }

    /// Opens the regular file `relative` beneath the folder `root` for reading: never above the
    /// root, through a link leaving it or a magic link (`openat2` with `RESOLVE_BENEATH`), never
    /// blocking (a FIFO), never becoming a terminal; then refuses anything but a regular file.
    static func openFile(_ relative: String, beneath root: String) -> Result<Int32, OpenRefusal> {
        let folder = PathEncoding.withCString(root) { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard folder >= 0 else { return .failure(.failed("the root cannot be opened: " + String(cString: strerror(errno)))) }
        defer { _ = Glibc.close(folder) }
        var fd: Int32
        repeat {
            fd = PathEncoding.withCString(relative) { blurfarm_open_beneath(folder, $0, O_RDONLY | O_NONBLOCK | O_NOCTTY) }
        } while fd < 0 && (errno == EINTR || errno == EAGAIN)
        if fd < 0 { return .failure(errno == EXDEV || errno == ELOOP ? .outside : .failed(String(cString: strerror(errno)))) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            _ = Glibc.close(fd)
            return .failure(.failed(reason))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            _ = Glibc.close(fd)
            return .failure(.notRegular(info.st_mode))
        }
        return .success(fd)
    }

    /// Reads at most `limit` bytes of the open file `fd`.
    static func read(_ fd: Int32, upTo limit: Int) -> Result<[UInt8], OpenRefusal> {
        var bytes = [UInt8](repeating: 0, count: limit)
        var count = 0
        while count < limit {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, limit - count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(.failed(String(cString: strerror(errno))))
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeSubrange(count...)
        return .success(bytes)
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
