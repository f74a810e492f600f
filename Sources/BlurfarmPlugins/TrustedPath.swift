import BlurfarmSystem

#if canImport(Glibc)
import Glibc
#endif

/// Opens a plugin folder or file without a race, as systemd's `chase()` does: from `/`, one
/// component at a time, each opened relative to the folder before it (`openat`, `O_PATH`,
/// `O_NOFOLLOW`) and checked on its descriptor (`fstat`), so that what is checked is what is
/// used, whatever anyone renames meanwhile. A symbolic link is read and the walk goes on from
/// a folder already checked (its target's folders are checked in turn); `..` goes back to the
/// folder checked before.
///
/// Every folder on the way must belong to root or to this process's user, and be writable by
/// no one else unless it is sticky (as `/tmp`): then nobody else can rename or remove what the
/// walk goes through. The folder that holds the plugins, and the plugin file, are held to more:
/// writable by their owner only (``checkWriters(_:_:what:consequence:)``).
enum TrustedPath {
    /// The most symbolic links one walk follows (the kernel's own limit).
    static let mostLinks = 40

    /// A descriptor that is closed when the value goes, unless ``keepOpen()`` was called.
    final class Descriptor {
        let number: Int32
        private var kept = false

        init(_ number: Int32) { self.number = number }

        /// Leaves the descriptor open for the process's life (a loaded library's).
        func keepOpen() { kept = true }

        deinit { if !kept { Syscalls.close(number) } }
    }

    /// A folder reached by a checked walk: its `O_PATH` descriptor and the path walked.
    struct Folder {
        let descriptor: Descriptor
        let path: String
    }

    /// Walks to the plugin folder `path` and checks it and every folder above it.
    ///
    /// - Throws: ``PluginError`` naming the folder refused (the plugin folder, or the folder
    ///   above it that is refused) and why.
    static func checkFolder(_ path: String) throws(PluginError) {
        let (folder, file) = try walk(path, what: "plugin folder", consequence: "no plugin is loaded from it")
        guard file == nil else { throw PluginError(path, "the plugin folder is not a folder") }
        let status = try status(of: folder.descriptor, path, what: "plugin folder")
        try checkWriters(status, path, what: "plugin folder", consequence: "no plugin is loaded from it")
    }

    /// Opens the plugin file `path` for reading, after checking every folder on the way to
    /// it, and checks what was opened: a regular file, writable by its owner only, who is root
    /// or this user. The folder that holds it (after symbolic links) is checked as a plugin
    /// folder.
    ///
    /// - Throws: ``PluginError`` naming the file, or the folder refused, and why.
    static func openFile(_ path: String) throws(PluginError) -> Descriptor {
        let (folder, name) = try walk(path, what: "plugin file", consequence: "it is not loaded")
        guard let name else { throw PluginError(path, "the plugin file is not a regular file") }
        let folderStatus = try status(of: folder.descriptor, folder.path, what: "plugin folder")
        try checkWriters(folderStatus, folder.path, what: "plugin folder", consequence: "no plugin is loaded from it")
        let file: Descriptor
        do {
            // Never blocking (a FIFO), never becoming the controlling terminal.
            file = Descriptor(try Syscalls.openFile(name, in: folder.descriptor.number, flags: O_RDONLY | O_NONBLOCK | O_NOCTTY))
        } catch {
            throw PluginError(path, "cannot use the plugin file: \(error.reason)")
        }
        let status = try status(of: file, path, what: "plugin file")
        guard status.isRegularFile else { throw PluginError(path, "the plugin file is not a regular file") }
        try checkWriters(status, path, what: "plugin file", consequence: "it is not loaded")
        return file
    }

    /// Walks `path` from `/`, checking each folder passed through as a folder above the
    /// target; returns the last folder reached and, when the last component is not a folder
    /// (nor a link), its name in that folder.
    private static func walk(_ path: String, what: String, consequence: String) throws(PluginError)
        -> (folder: Folder, name: String?)
    {
        func cannot(_ error: SystemCallError) -> PluginError { PluginError(path, "cannot use the \(what): \(error.reason)") }
        var absolute = path
        if !path.hasPrefix("/") {
            do {
                absolute = PluginLoader.join(try Syscalls.currentFolder(), path)
            } catch {
                throw cannot(error)
            }
        }
        let root: Descriptor
        do {
            root = Descriptor(try Syscalls.openRoot())
        } catch {
            throw cannot(error)
        }
        var folders = [Folder(descriptor: root, path: "/")]
        // Components still to walk, the next one last.
        var pending = Array(components(absolute).reversed())
        if !pending.isEmpty { try checkAbove(root, "/", what, path, consequence) }
        var links = 0
        while let name = pending.popLast() {
            if name == ".." {
                if folders.count > 1 { folders.removeLast() }
                continue
            }
            let parent = folders[folders.count - 1]
            let entryPath = PluginLoader.join(parent.path, name)
            let entry: Descriptor
            do {
                entry = Descriptor(try Syscalls.openEntry(name, in: parent.descriptor.number))
            } catch {
                throw cannot(error)
            }
            let status = try self.status(of: entry, path, what: what)
            if status.isSymbolicLink {
                links += 1
                guard links <= mostLinks else { throw PluginError(path, "cannot use the \(what): too many symbolic links") }
                let target: String
                do {
                    target = try Syscalls.linkTarget(of: entry.number)
                } catch {
                    throw cannot(error)
                }
                if target.hasPrefix("/") { folders.removeSubrange(1...) }
                pending += components(target).reversed()
            } else if status.isDirectory {
                // The target itself is checked by the caller, as a plugin folder.
                if !pending.isEmpty { try checkAbove(entry, entryPath, what, path, consequence) }
                folders.append(Folder(descriptor: entry, path: entryPath))
            } else if pending.isEmpty {
                return (parent, name)
            } else {
                throw PluginError(path, "cannot use the \(what): \(entryPath) is not a folder")
            }
        }
        return (folders[folders.count - 1], nil)
    }

    /// The components of `path` without empty ones and `.`.
    private static func components(_ path: String) -> [String] {
        path.split(separator: "/").map(String.init).filter { $0 != "." }
    }

    private static func status(of descriptor: Descriptor, _ path: String, what: String) throws(PluginError)
        -> FileStatus
    {
        do {
            return try Syscalls.fileStatus(of: descriptor.number)
        } catch {
            throw PluginError(path, "cannot use the \(what): \(error.reason)")
        }
    }

    /// Refuses a folder above the target that belongs to someone other than root and this
    /// user, or that others can write and is not sticky.
    private static func checkAbove(
        _ folder: Descriptor, _ folderPath: String, _ what: String, _ target: String, _ consequence: String
    ) throws(PluginError) {
        let status = try status(of: folder, folderPath, what: what)
        let role = "a folder above the \(what) \(target)"
        if status.permissions & 0o022 != 0 && status.permissions & 0o1000 == 0 {
            throw PluginError(
                folderPath,
                "\(role) is writable by \(writers(status)) and not sticky (mode \(mode(status))): \(consequence)")
        }
        if status.owner != 0 && status.owner != Syscalls.effectiveUserID {
            throw PluginError(
                folderPath, "\(role) belongs to user \(status.owner), neither root nor this user: \(consequence)")
        }
    }

    /// Refuses a plugin folder or file that others can write, or whose owner is neither root
    /// nor this user.
    static func checkWriters(
        _ status: FileStatus, _ path: String, what: String, consequence: String
    ) throws(PluginError) {
        if status.permissions & 0o022 != 0 {
            throw PluginError(
                path, "the \(what) is writable by \(writers(status)) (mode \(mode(status))): \(consequence)")
        }
        if status.owner != 0 && status.owner != Syscalls.effectiveUserID {
            throw PluginError(
                path, "the \(what) belongs to user \(status.owner), neither root nor this user: \(consequence)")
        }
    }

    private static func writers(_ status: FileStatus) -> String {
        status.permissions & 0o002 != 0 ? "other users" : "its group"
    }

    private static func mode(_ status: FileStatus) -> String { String(status.permissions, radix: 8) }
}
