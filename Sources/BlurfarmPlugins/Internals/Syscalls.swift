// Every system call of BlurfarmPlugins: the file checks (stat, realpath, the folder listing)
// and the dynamic loader (dlopen, dlsym, dlerror). This is the only file in blurfarm that
// calls dlopen.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat` says of a file: its type, permission bits and owner.
struct FileStatus {
    let isDirectory: Bool
    let isRegularFile: Bool
    /// The permission bits (`st_mode & 0o7777`).
    let permissions: UInt32
    let owner: UInt32
}

/// Why a call failed: the `errno` text or the dynamic loader's message.
struct SystemFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum Syscalls {
    /// `stat(path)`, following symbolic links; the `errno` text when it fails.
    static func status(_ path: String) -> Result<FileStatus, SystemFailure> {
        var info = stat()
        while stat(path, &info) != 0 {
            if errno != EINTR { return .failure(SystemFailure(String(cString: strerror(errno)))) }
        }
        let type = UInt32(info.st_mode) & UInt32(S_IFMT)
        return .success(FileStatus(
            isDirectory: type == UInt32(S_IFDIR), isRegularFile: type == UInt32(S_IFREG),
            permissions: UInt32(info.st_mode) & 0o7777, owner: UInt32(info.st_uid)))
    }

    /// The user this process acts as (its effective user id).
    static var effectiveUser: UInt32 { UInt32(geteuid()) }

    /// The absolute path with every symbolic link resolved, or `nil`.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The names in a folder (without `.` and `..`), or the `errno` text.
    static func folderEntries(_ path: String) -> Result<[String], SystemFailure> {
        guard let folder = opendir(path) else { return .failure(SystemFailure(String(cString: strerror(errno)))) }
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

    /// Loads the shared library at `path` with every symbol bound now and none exported to
    /// later libraries. Never closed: plugins are not unloaded. The loader's message on failure.
    static func openLibrary(_ path: String) -> Result<UnsafeMutableRawPointer, SystemFailure> {
        _ = dlerror()
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else { return .failure(SystemFailure(lastLoaderError())) }
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
