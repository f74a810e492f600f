// The plugin host's own system calls, added to BlurfarmSystem's `Syscalls` (retried there on
// interruption, failing with its `SystemCallError`): the race-free walk of `TrustedPath`
// (`O_PATH` descriptors, `readlinkat` on them) and the dynamic loader (dlopen, dlsym, dlerror).
// This is the only file in blurfarm that calls dlopen.
import BlurfarmSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat` says of a file: its type, permission bits and owner.
struct FileStatus {
    let isDirectory: Bool
    let isRegularFile: Bool
    let isSymbolicLink: Bool
    /// The permission bits (`st_mode & 0o7777`), the sticky bit (0o1000) included.
    let permissions: UInt32
    let owner: UInt32

    init(_ info: stat) {
        let type = UInt32(info.st_mode) & UInt32(S_IFMT)
        isDirectory = type == UInt32(S_IFDIR)
        isRegularFile = type == UInt32(S_IFREG)
        isSymbolicLink = type == UInt32(S_IFLNK)
        permissions = UInt32(info.st_mode) & 0o7777
        owner = UInt32(info.st_uid)
    }
}

extension Syscalls {
    /// `O_PATH` (Linux's value on every architecture Swift supports), which Glibc's module
    /// does not show without `_GNU_SOURCE`: a descriptor that names a file without opening it.
    private static let openPathOnly: Int32 = 0o10_000_000

    /// The root folder as an `O_PATH` descriptor.
    static func openRoot() throws(SystemCallError) -> Int32 {
        try retrying("open") { open("/", openPathOnly | O_DIRECTORY | O_CLOEXEC) }
    }

    /// The entry `name` of the folder `folder` as an `O_PATH` descriptor, never following a
    /// symbolic link: a link gives a descriptor of the link itself (``linkTarget(of:)``).
    static func openEntry(_ name: String, in folder: Int32) throws(SystemCallError) -> Int32 {
        try retrying("openat") { PathEncoding.withCString(name) { openat(folder, $0, openPathOnly | O_NOFOLLOW | O_CLOEXEC) } }
    }

    /// `fstat` of a descriptor: what was opened, not what a path names now.
    static func fileStatus(of descriptor: Int32) throws(SystemCallError) -> FileStatus {
        FileStatus(try status(of: descriptor))
    }

    /// The target of the symbolic link an `O_PATH` descriptor of ``openEntry(_:in:)`` holds.
    static func linkTarget(of descriptor: Int32) throws(SystemCallError) -> String {
        PathEncoding.decode(try linkTarget([], in: descriptor)).text
    }

    /// Loads the shared library open on `descriptor` (through `/proc/self/fd/N`: exactly the
    /// file that was opened and checked, whatever its path names now) with every symbol bound
    /// now and none exported to later libraries. Never closed: plugins are not unloaded, and
    /// the descriptor of a library that loaded must stay open while the process lives (the
    /// dynamic loader knows the library by that name: a reused number would be taken for it).
    ///
    /// - Throws: ``PluginError`` about `path` with the loader's message (which names `path`
    ///   for the `/proc` path).
    static func openLibrary(_ descriptor: Int32, path: String) throws(PluginError) -> UnsafeMutableRawPointer {
        let procPath = "/proc/self/fd/\(descriptor)"
        _ = dlerror()
        guard let handle = dlopen(procPath, RTLD_NOW | RTLD_LOCAL) else {
            throw PluginError(path, "cannot be loaded: " + lastLoaderError().replacing(procPath, with: path))
        }
        return handle
    }

    /// The address of `symbol` in a library opened by ``openLibrary(_:path:)``, or `nil`.
    static func symbol(_ symbol: String, in handle: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
        _ = dlerror()
        return dlsym(handle, symbol)
    }

    private static func lastLoaderError() -> String {
        guard let text = dlerror() else { return "unknown error" }
        return String(cString: text)
    }

    /// The length of the C string at `pointer`, looking at no more than `limit` bytes; `nil`
    /// when there is no NUL within them.
    static func boundedLength(_ pointer: UnsafePointer<CChar>, limit: Int) -> Int? {
        let length = strnlen(pointer, limit)
        return length < limit ? length : nil
    }
}
