// The file system calls of decoding and writing images (atomic files beneath a root, extended
// attributes, the memory this process may use), of real paths and host names, through the one
// EINTR helper (`retrying`) and the one `SystemCallError` of Syscalls.swift. Every path and name is
// given to the kernel as the bytes it stands for (`PathEncoding.withCString`).
import CSystemShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Syscalls {
    /// The kind of thing at `path`, following links: nil when nothing is there. `other` says
    /// what it is, as people say it ("a FIFO", "a socket", "a character device").
    package enum FileKind: Equatable { case regular, directory, other(String) }

    /// The kind of a file whose `st_mode` is `mode`.
    package static func kind(ofMode mode: mode_t) -> FileKind {
        switch mode & S_IFMT {
        case S_IFREG: .regular
        case S_IFDIR: .directory
        default: .other(fileKindName(mode))
        }
    }

    package static func kind(of path: String) throws(SystemCallError) -> FileKind? {
        var info = stat()
        do {
            try retrying("stat") { PathEncoding.withCString(path) { stat($0, &info) } }
        } catch where error.errno == ENOENT || error.errno == ENOTDIR {
            return nil
        }
        return kind(ofMode: info.st_mode)
    }

    /// Creates the file `name` in the folder `folder`, which must not exist (not even as a
    /// symbolic link), for writing; mode 0666 less the umask.
    package static func createExclusive(_ name: String, in folder: Int32) throws(SystemCallError) -> Int32 {
        try retrying("open") {
            PathEncoding.withCString(name) { openat(folder, $0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666) }
        }
    }

    /// Creates a file without a name in the folder `folder`, for writing and reading (``blurfarm_open_unnamed_file``:
    /// EOPNOTSUPP, EISDIR or EINVAL where the file system has none); mode 0666 less the umask.
    package static func createUnnamed(in folder: Int32) throws(SystemCallError) -> Int32 {
        try retrying("open(O_TMPFILE)") { blurfarm_open_unnamed_file(folder) }
    }

    /// Gives the file open on `fd` the name `name` in the folder `folder`: `linkat` of
    /// `/proc/self/fd/N` following the link (an unnamed file may be linked once; EEXIST when
    /// the name exists: linkat never replaces).
    package static func link(_ fd: Int32, as name: String, in folder: Int32) throws(SystemCallError) {
        try retrying("linkat") {
            PathEncoding.withCString(name) { linkat(AT_FDCWD, "/proc/self/fd/\(fd)", folder, $0, AT_SYMLINK_FOLLOW) }
        }
    }

    /// Opens the file `name` in the folder `folder` to look at it, never through a symbolic
    /// link, never blocking (a FIFO).
    package static func openToInspect(_ name: String, in folder: Int32) throws(SystemCallError) -> Int32 {
        try retrying("open") {
            PathEncoding.withCString(name) { openat(folder, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        }
    }

    /// Sets the extended attribute `name` of the open file `fd` to `value`.
    package static func setAttribute(_ fd: Int32, _ name: String, _ value: String) throws(SystemCallError) {
        let bytes = Array(value.utf8)
        try retrying("fsetxattr") { bytes.withUnsafeBytes { fsetxattr(fd, name, $0.baseAddress, $0.count, 0) } }
    }

    /// The extended attribute `name` of the open file `fd` (at most 256 bytes); nil when it has
    /// none or the file system keeps none.
    package static func attribute(_ fd: Int32, _ name: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { fgetxattr(fd, name, $0.baseAddress, $0.count) }
        return count < 0 ? nil : String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// This host's name, as `gethostname` gives it ("" when it cannot).
    package static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Opens `path` with `flags` beneath the open folder `root`: never above it, never through a
    /// magic link (``blurfarm_open_beneath``: EXDEV or ELOOP when resolving leaves it, EAGAIN
    /// when a concurrent rename or mount interrupted the resolution).
    package static func openFile(_ path: String, beneath root: Int32, flags: Int32) throws(SystemCallError) -> Int32 {
        try retrying("openat2") { PathEncoding.withCString(path) { blurfarm_open_beneath(root, $0, flags) } }
    }

    /// Makes the folder `name` in the open folder `folder` (mode 0777 less the umask); false
    /// when something is already there.
    package static func makeFolder(_ name: String, in folder: Int32) throws(SystemCallError) -> Bool {
        do {
            try retrying("mkdirat") { PathEncoding.withCString(name) { mkdirat(folder, $0, 0o777) } }
            return true
        } catch where error.errno == EEXIST {
            return false
        }
    }

    /// `path` with every link, `.` and `..` resolved (`realpath`); nil when it does not exist.
    package static func realPath(_ path: String) -> String? {
        PathEncoding.withCString(path) { pointer -> String? in
            guard let resolved = realpath(pointer, nil) else { return nil }
            defer { free(resolved) }
            return PathEncoding.decode(UnsafeRawBufferPointer(start: resolved, count: strlen(resolved))).text
        }
    }

    /// The folders the dynamic loader searches, in order, for a library this program loads by
    /// name (`LD_LIBRARY_PATH`'s, the program's run path, the system's; `/etc/ld.so.cache` is
    /// asked between the last two); empty when the loader cannot say.
    package static func librarySearchPath() -> [String] {
        guard let joined = blurfarm_library_search_path() else { return [] }
        defer { free(joined) }
        return String(cString: joined).split(separator: "\n").map(String.init)
    }

    /// This process's mappings, as `/proc/self/maps` lists them (address, permissions, offset,
    /// device, inode, path: one line each); nil when it cannot be read.
    package static func mappedFiles() -> String? {
        guard let fd = try? openForReading("/proc/self/maps") else { return nil }
        defer { close(fd) }
        return (try? readAll(fd, upTo: 64 << 20)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Writes all of `bytes` to `fd`.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemCallError) {
        var done = 0
        while done < bytes.count {
            let offset = done
            let n = try retrying("write") { bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) } }
            if n == 0 { throw SystemCallError(call: "write", errno: EIO) }
            done += n
        }
    }

    /// A new anonymous file in memory (`memfd_create`, closed on exec).
    package static func memoryFile(named name: String) throws(SystemCallError) -> Int32 {
        try retrying("memfd_create") { blurfarm_memfd_create(name) }
    }

    /// Copies everything readable from `source` (a pipe or a file) to `target`; the bytes
    /// copied.
    package static func copyAll(from source: Int32, to target: Int32) throws(SystemCallError) -> Int {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0
        while true {
            let count = chunk.count
            let n = try retrying("read") { chunk.withUnsafeMutableBytes { Glibc.read(source, $0.baseAddress, count) } }
            if n == 0 { return total }
            try writeAll(target, Array(chunk[0..<n]))
            total += n
        }
    }

    /// Closes `fd`. EINTR is not retried: on Linux the descriptor is gone either way.
    package static func closeReporting(_ fd: Int32) throws(SystemCallError) {
        if Glibc.close(fd) != 0 && Glibc.errno != EINTR {
            throw SystemCallError(call: "close", errno: Glibc.errno)
        }
    }

    /// The names in `folder` (without "." and ".."), as ``PathEncoding`` carries them; none when
    /// it cannot be read.
    package static func names(inFolder folder: String) -> [String] {
        (try? folderNames(folder)) ?? []
    }

    /// The names in `folder` (without "." and ".."), as ``PathEncoding`` carries them.
    /// - Throws: the `opendir` failure (EACCES, ENOENT, ENOTDIR).
    package static func folderNames(_ folder: String) throws(SystemCallError) -> [String] {
        guard let directory = PathEncoding.withCString(folder, { opendir($0) }) else {
            throw SystemCallError(call: "opendir", errno: Glibc.errno)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                PathEncoding.decode(raw.prefix(while: { $0 != 0 })).text
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes `path`, ignoring failure (used to clean up after another failure).
    package static func removeQuietly(_ path: String) {
        _ = PathEncoding.withCString(path) { unlink($0) }
    }

    /// Whether the calling process may create files in the folder `path`.
    package static func canCreateFiles(in path: String) -> Bool {
        (try? checkCanCreateFiles(in: path)) != nil
    }

    /// Throws unless the calling process may create files in the folder `path`: why not
    /// (EACCES, or EROFS for a read-only file system).
    package static func checkCanCreateFiles(in path: String) throws(SystemCallError) {
        try retrying("access") { PathEncoding.withCString(path) { access($0, W_OK | X_OK) } }
    }

    /// The `count` bytes of `fd` from `offset`, or those there are before the end of the file
    /// (fewer, none at its end): `pread` until they are all read.
    package static func readBytes(_ fd: Int32, count: Int, at offset: Int) throws(SystemCallError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let read = try bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemCallError) in
                    try Self.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: offset + done)
                }
            }.get()
            if read == 0 { break }
            done += read
        }
        return done == count ? bytes : Array(bytes[..<done])
    }

    /// Hands `body` the bytes of the file at `path` from its start, `size` at a time (fewer at
    /// its end): a file read as it streams, never held whole.
    /// - Throws: the `open` or `pread` failure, or what `body` throws.
    package static func forEachChunk(of path: String, size: Int = 1 << 16, _ body: ([UInt8]) throws -> Void) throws {
        let fd = try openForReading(path)
        defer { close(fd) }
        var offset = 0
        while true {
            let chunk = try readBytes(fd, count: size, at: offset)
            if chunk.isEmpty { return }
            offset += chunk.count
            try body(chunk)
        }
    }

    /// Reads up to `buffer.count` bytes of `fd` at `offset` into `buffer`; the number read, 0
    /// at the end of the file.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SystemCallError) -> Int {
        try retrying("pread") { pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// The memory this process may use, in bytes: the least of the physical memory, the
    /// address-space and data-segment limits (`RLIMIT_AS`, `RLIMIT_DATA`) and the memory
    /// limit of its control group (cgroup v2 `memory.max`); nil when none is known.
    package static func usableMemory() -> Int? {
        var bounds: [Int] = []
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), pageSize = sysconf(Int32(_SC_PAGESIZE))
        if pages > 0 && pageSize > 0 { bounds.append(pages.multipliedReportingOverflow(by: pageSize).partialValue) }
        bounds += [RLIMIT_AS, RLIMIT_DATA].compactMap(softLimit)
        if let group = cgroupMemoryLimit() { bounds.append(group) }
        return bounds.min()
    }

    /// The `memory.max` of this process's cgroup (v2), when it has a number there.
    private static func cgroupMemoryLimit() -> Int? {
        guard let membership = readSmallFile("/proc/self/cgroup"),
            let line = membership.split(separator: "\n").first(where: { $0.hasPrefix("0::") })
        else { return nil }
        let group = line.dropFirst(3)
        guard let text = readSmallFile("/sys/fs/cgroup" + group + "/memory.max") else { return nil }
        return text.split(separator: "\n").first.flatMap { Int($0) }  // "max" when unlimited
    }

    /// The text of a small file (at most 4 KiB), or nil.
    private static func readSmallFile(_ path: String) -> String? {
        guard let fd = try? openForReading(path) else { return nil }
        defer { close(fd) }
        guard let bytes = try? readAll(fd, upTo: 4096), !bytes.isEmpty else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
