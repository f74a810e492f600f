// Every system call of BlurfarmPlugins: the file checks (stat, the folder listing, and the
// race-free walk of `TrustedPath`: openat, fstat, readlinkat on descriptors) and the dynamic
// loader (dlopen, dlsym, dlerror). This is the only file in blurfarm that calls dlopen.
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

/// Why a call failed: the `errno` text or the dynamic loader's message.
struct SystemFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum Syscalls {
    /// `stat(path)`, following symbolic links; the `errno` text when it fails. Only to find
    /// which folder has a file: nothing is trusted because of it.
    static func status(_ path: String) -> Result<FileStatus, SystemFailure> {
        var info = stat()
        while stat(path, &info) != 0 {
            if errno != EINTR { return .failure(lastFailure()) }
        }
        return .success(FileStatus(info))
    }

    /// The user this process acts as (its effective user id).
    static var effectiveUser: UInt32 { UInt32(geteuid()) }

    /// `O_PATH` (Linux's value on every architecture Swift supports), which Glibc's module
    /// does not show without `_GNU_SOURCE`: a descriptor that names a file without opening it.
    private static let openPathOnly: Int32 = 0o10_000_000

    /// The root folder as an `O_PATH` descriptor.
    static func openRoot() -> Result<Int32, SystemFailure> {
        retrying { open("/", openPathOnly | O_DIRECTORY | O_CLOEXEC) }
    }

    /// The entry `name` of the folder `folder` as an `O_PATH` descriptor, never following a
    /// symbolic link: a link gives a descriptor of the link itself (``linkTarget(_:)``).
    static func openEntry(_ name: String, in folder: Int32) -> Result<Int32, SystemFailure> {
        retrying { openat(folder, name, openPathOnly | O_NOFOLLOW | O_CLOEXEC) }
    }

    /// The entry `name` of the folder `folder` opened for reading, never following a symbolic
    /// link, never blocking (a FIFO) and never becoming the controlling terminal.
    static func openForReading(_ name: String, in folder: Int32) -> Result<Int32, SystemFailure> {
        retrying { openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
    }

    /// `fstat` of a descriptor: what was opened, not what a path names now.
    static func status(of descriptor: Int32) -> Result<FileStatus, SystemFailure> {
        var info = stat()
        while fstat(descriptor, &info) != 0 {
            if errno != EINTR { return .failure(lastFailure()) }
        }
        return .success(FileStatus(info))
    }

    /// The target of the symbolic link an `O_PATH` descriptor of ``openEntry(_:in:)`` holds.
    static func linkTarget(_ descriptor: Int32) -> Result<String, SystemFailure> {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        var length = -1
        repeat {
            length = buffer.withUnsafeMutableBytes { readlinkat(descriptor, "", $0.baseAddress!, $0.count) }
        } while length < 0 && errno == EINTR
        if length < 0 { return .failure(lastFailure()) }
        guard length < buffer.count else { return .failure(SystemFailure(String(cString: strerror(ENAMETOOLONG)))) }
        return .success(String(decoding: buffer[..<length], as: UTF8.self))
    }

    /// Closes a descriptor (once: `close` is not retried on EINTR on Linux, where the
    /// descriptor is gone either way).
    static func closeDescriptor(_ descriptor: Int32) {
        _ = close(descriptor)
    }

    /// The working folder's absolute path, or the `errno` text.
    static func currentFolder() -> Result<String, SystemFailure> {
        guard let path = getcwd(nil, 0) else { return .failure(lastFailure()) }
        defer { free(path) }
        return .success(String(cString: path))
    }

    private static func retrying(_ call: () -> Int32) -> Result<Int32, SystemFailure> {
        while true {
            let descriptor = call()
            if descriptor >= 0 { return .success(descriptor) }
            if errno != EINTR { return .failure(lastFailure()) }
        }
    }

    private static func lastFailure() -> SystemFailure { SystemFailure(String(cString: strerror(errno))) }

    /// The names in a folder (without `.` and `..`), or the `errno` text.
    static func folderEntries(_ path: String) -> Result<[String], SystemFailure> {
        guard let folder = opendir(path) else { return .failure(lastFailure()) }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return .success(names)
    }

    /// Loads the shared library open on `descriptor` (through `/proc/self/fd/N`: exactly the
    /// file that was opened and checked, whatever its path names now) with every symbol bound
    /// now and none exported to later libraries. Never closed: plugins are not unloaded, and
    /// the descriptor of a library that loaded must stay open while the process lives (the
    /// dynamic loader knows the library by that name: a reused number would be taken for it).
    /// The loader's message on failure, with `name` for the `/proc` path.
    static func openLibrary(_ descriptor: Int32, name: String) -> Result<UnsafeMutableRawPointer, SystemFailure> {
        let procPath = "/proc/self/fd/\(descriptor)"
        _ = dlerror()
        guard let handle = dlopen(procPath, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(SystemFailure(lastLoaderError().replacing(procPath, with: name)))
        }
        return .success(handle)
    }

    /// The address of `symbol` in a library opened by ``openLibrary(_:)``, or `nil`.
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
