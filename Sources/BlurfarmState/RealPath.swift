import BlurfarmSystem
import BlurfarmCore
import Foundation
import Synchronization

/// Paths as the kernel resolves them: what makes two spellings (`out/../in/a.jpg`, a folder
/// that is a symbolic link, a hard link) the same file.
package enum RealPath {
    /// `path` made absolute against the working directory, with every symbolic link, `.` and
    /// `..` resolved as the kernel would. Components that do not exist yet (an output folder
    /// a run creates) are taken as spelled, so `..` after one of them removes it.
    package static func resolve(_ path: String) -> String { walk(absolute(path)) }

    /// `path` with its folder resolved (``resolve(_:)``) and its last name as it is: where a
    /// file is, however the folders were spelled, without following a link the file may be
    /// (an output is renamed over its name, so a link there is replaced, never followed).
    package static func resolveFolder(of path: String, using folders: Folders? = nil) -> String {
        // From the bytes: a `/` is one in UTF-8 (the characters' view was 3% of a no-change run).
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let name = slash.map { path[path.utf8.index(after: $0)...] } ?? path[...]
        let workingDirectory = { folders?.workingDirectory ?? Syscalls.workingDirectory() }
        if name.isEmpty || name == "." || name == ".." {
            return walk(path.hasPrefix("/") ? path : workingDirectory() + "/" + path)
        }
        // The folder as spelled: absolute, or relative to the working directory ("" for it).
        // Folders repeat from file to file: each is resolved once per job (`folders`), found
        // by its spelling, which for a short relative one is a string without storage of its
        // own (a plan's and a check's absolute paths, made and joined again, were 30% of
        // the check of a 100,000-input no-change run).
        let spelled = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? ""
        let resolve = {
            walk(spelled.hasPrefix("/") ? spelled : spelled.isEmpty ? workingDirectory() : workingDirectory() + "/" + spelled)
        }
        let folder = folders?.resolved(spelled, resolve) ?? resolve()
        var joined = folder
        joined.reserveCapacity(folder.utf8.count + 1 + name.utf8.count)
        if folder != "/" { joined += "/" }
        joined += name
        return joined
    }

    /// Folders already resolved, by their spelling's bytes (``resolveFolder(of:using:)``: two
    /// spellings one string to Swift, `é` and `e` with a combining accent, are two folders), and the working directory, for the
    /// paths of one job (one plan, one run): a link changed while a job plans is a race the
    /// plan cannot win anyway, and what matters is checked again when files are opened
    /// (relative to a folder descriptor, without following links); the next job, in a process
    /// that lives long (a farm service), resolves them anew.
    package final class Folders: Sendable {
        private let resolved = Mutex<[Identity.Bytes: String]>([:])
        private let identities = Mutex<[Identity.Bytes: (device: UInt64, inode: UInt64)?]>([:])
        /// The working directory when the job began (`getcwd` once, not once a path).
        package let workingDirectory = Syscalls.workingDirectory()

        package init() {}

        package func resolved(_ spelled: String, _ resolve: () -> String) -> String {
            if let known = resolved.withLock({ $0[.init(spelled)] }) { return known }
            let folder = resolve()
            resolved.withLock { $0[.init(spelled)] = folder }
            return folder
        }

        /// The device and inode of the resolved folder `real` (nil when it is not there),
        /// stated once (``RealPath/identity(of:using:)``).
        package func identity(ofFolder real: String, _ state: () -> (UInt64, UInt64)?) -> (device: UInt64, inode: UInt64)? {
            if let known = identities.withLock({ $0[.init(real)] }) { return known }
            let identity = state().map { (device: $0.0, inode: $0.1) }
            identities.withLock { $0[.init(real)] = .some(identity) }
            return identity
        }
    }

    /// `path` made absolute against the working directory, as spelled (no link resolved).
    package static func absolute(_ path: String) -> String {
        // The working directory as it is now: the library keeps none of its own.
        path.hasPrefix("/") ? path : Syscalls.workingDirectory() + "/" + path
    }

    /// ``resolve(_:)`` component by component, for an absolute path.
    private static func walk(_ absolute: String) -> String {
        // On the bytes the path stands for (a link's target may be any bytes), as the kernel.
        var pending = PathEncoding.bytes(absolute).split(separator: UInt8(ascii: "/")).map(Array.init).reversed() as [[UInt8]]
        var resolved: [[UInt8]] = []
        var links = 0
        while let part = pending.popLast() {
            if part == [0x2E] { continue }
            if part == [0x2E, 0x2E] {
                _ = resolved.popLast()
                continue
            }
            let candidate = [UInt8(ascii: "/")] + Array((resolved + [part]).joined(separator: [UInt8(ascii: "/")]))
            // 40 links at most, as the kernel (ELOOP): past that the name is taken as spelled.
            if links < 40, let target = try? Syscalls.linkTarget(candidate) {
                links += 1
                if target.first == UInt8(ascii: "/") { resolved = [] }
                pending += target.split(separator: UInt8(ascii: "/")).map(Array.init).reversed()
                continue
            }
            resolved.append(part)
        }
        return text(resolved)
    }

    private static func text(_ parts: [[UInt8]]) -> String {
        PathEncoding.decode([UInt8(ascii: "/")] + Array(parts.joined(separator: [UInt8(ascii: "/")]))).text
    }

    /// Which file a path names, however spelled.
    package enum Identity: Hashable {
        /// An existing file: its device and inode (hard links are one file).
        case file(device: UInt64, inode: UInt64)
        /// A file that does not exist yet, in an existing folder: the folder's device and inode
        /// and the name.
        case entry(device: UInt64, inode: UInt64, name: Bytes)
        /// A file in a folder that does not exist yet: its resolved path.
        case path(Bytes)

        /// A name or a path as the kernel compares it, by its bytes: Swift's strings compare
        /// (and hash) by canonical equivalence, and `é` and `e` with a combining accent, one
        /// string, are two files. Ordered by the bytes, as `ls` in the C locale and SQLite order
        /// paths.
        package struct Bytes: Hashable, Comparable, Sendable {
            package let text: String

            package init(_ text: String) { self.text = text }

            /// Compared through the strings' spans of UTF-8 (their storage, bounds checked): a
            /// third less time than through `String.UTF8View`'s iterator, a dictionary's lookup of
            /// 300,000 paths of 40 bytes with its hashing (0.69 against 1.00 s for five rounds).
            package static func == (a: Bytes, b: Bytes) -> Bool {
                let (x, y) = (a.text.utf8Span.span, b.text.utf8Span.span)
                guard x.count == y.count else { return false }
                for index in x.indices where x[index] != y[index] { return false }
                return true
            }

            package static func < (a: Bytes, b: Bytes) -> Bool { a.text.utf8.lexicographicallyPrecedes(b.text.utf8) }

            /// The bytes' FNV-1a hash, combined once.
            package func hash(into hasher: inout Hasher) {
                let bytes = text.utf8Span.span
                var hash: UInt64 = 0xcbf2_9ce4_8422_2325
                for index in bytes.indices { hash = (hash ^ UInt64(bytes[index])) &* 0x100_0000_01b3 }
                hasher.combine(hash)
            }
        }
    }

    /// The identity of the file at `path`: the file it names (following every link) when it
    /// exists, else the entry its name makes in its (resolved) folder.
    /// With `folders`, each folder is resolved and stated once (a first run's outputs, none of
    /// them there yet, share a few folders).
    package static func identity(of path: String, using folders: Folders? = nil) -> Identity {
        identity(of: path, stated: Syscalls.status(path), using: folders)
    }

    /// ``identity(of:using:)``, given what `stat` said of `path` (nil: nothing is there).
    package static func identity(of path: String, stated info: stat?, using folders: Folders? = nil) -> Identity {
        if let info {
            return .file(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        }
        let real = resolveFolder(of: path, using: folders)
        let folder = PathName.folder(of: real)
        let stated = { Syscalls.status(folder).map { (UInt64($0.st_dev), UInt64($0.st_ino)) } }
        // A folder that is not there is remembered so too: asked again, it cost a first run's
        // outputs a `stat` each.
        let folderIdentity = if let folders { folders.identity(ofFolder: folder, stated) } else { stated() }
        if let (device, inode) = folderIdentity {
            return .entry(device: device, inode: inode, name: Identity.Bytes(PathName.lastName(of: real)))
        }
        return .path(Identity.Bytes(real))
    }
}
