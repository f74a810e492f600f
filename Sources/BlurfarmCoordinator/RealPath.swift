import Foundation

/// Paths as the kernel resolves them: what makes two spellings (`out/../in/a.jpg`, a folder
/// that is a symbolic link, a hard link) the same file.
enum RealPath {
    /// `path` made absolute against the working directory, with every symbolic link, `.` and
    /// `..` resolved as the kernel would. Components that do not exist yet (an output folder
    /// a run creates) are taken as spelled, so `..` after one of them removes it.
    static func resolve(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var pending = absolute.utf8.split(separator: UInt8(ascii: "/")).map(Array.init).reversed() as [[UInt8]]
        var resolved: [[UInt8]] = []
        var links = 0
        while let part = pending.popLast() {
            if part == [0x2E] { continue }
            if part == [0x2E, 0x2E] {
                _ = resolved.popLast()
                continue
            }
            let candidate = text(resolved + [part])
            // 40 links at most, as the kernel (ELOOP): past that the name is taken as spelled.
            if links < 40, let target = Syscalls.linkTarget(candidate) {
                links += 1
                if target.first == UInt8(ascii: "/") { resolved = [] }
                pending += target.split(separator: UInt8(ascii: "/")).map(Array.init).reversed()
                continue
            }
            resolved.append(part)
        }
        return text(resolved)
    }

    /// `path` with its folder resolved (``resolve(_:)``) and its last name as it is: where a
    /// file is, however the folders were spelled, without following a link the file may be.
    static func resolveFolder(of path: String) -> String {
        let name = (path as NSString).lastPathComponent
        guard name != "." && name != ".." && !name.isEmpty && name != "/" else { return resolve(path) }
        let folder = resolve((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent)
        return folder == "/" ? "/" + name : folder + "/" + name
    }

    private static func text(_ parts: [[UInt8]]) -> String {
        String(decoding: [UInt8(ascii: "/")] + Array(parts.joined(separator: [UInt8(ascii: "/")])), as: UTF8.self)
    }

    /// Which file a path names, however spelled.
    enum Identity: Hashable {
        /// An existing file: its device and inode (hard links are one file).
        case file(device: UInt64, inode: UInt64)
        /// A file that does not exist yet, in an existing folder: the folder's device and inode
        /// and the name.
        case entry(device: UInt64, inode: UInt64, name: String)
        /// A file in a folder that does not exist yet: its resolved path.
        case path(String)
    }

    /// The identity of the file `path` names (following every link).
    static func identity(of path: String) -> Identity {
        let real = resolve(path)
        if let info = Syscalls.status(real) {
            return .file(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        }
        let folder = (real as NSString).deletingLastPathComponent
        if let info = Syscalls.status(folder) {
            return .entry(
                device: UInt64(info.st_dev), inode: UInt64(info.st_ino), name: (real as NSString).lastPathComponent)
        }
        return .path(real)
    }
}
