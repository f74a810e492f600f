import BlurfarmSystem
import Foundation

/// What a process says of the libvips it loads, for another to name it without loading it:
/// what `blurfarm-worker --libvips-version` prints and a coordinator reads (BlurfarmFarm's
/// `LibvipsVersion`). One line each: the version ("8.14.1"), the library's file as the dynamic
/// loader found it, the inode of the file mapped (from `/proc/self/maps`, so that the reader
/// keeps the version only for that very file), then the folders the loader searches, in order.
public struct LibvipsReport: Sendable, Equatable {
    /// The version ("8.14.1").
    public var version: String
    /// The file as the loader found it ("/lib/x86_64-linux-gnu/libvips.so.42").
    public var file: String
    /// The inode of the file mapped.
    public var inode: UInt64
    /// The folders the loader searches for a library, in order.
    public var searchPath: [String]

    /// The report of this process's libvips (mapped, not started); nil when it cannot be
    /// loaded or the file mapped is not found among the process's mappings.
    public static var ofThisProcess: LibvipsReport? {
        guard let file = Libvips.file, let real = Syscalls.realPath(file), let maps = Syscalls.mappedFiles(),
            let line = maps.split(separator: "\n").first(where: { $0.hasSuffix(" " + real) })
        else { return nil }
        // address perms offset device inode path
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 6, let inode = UInt64(fields[4]) else { return nil }
        return LibvipsReport(version: Libvips.version, file: file, inode: inode, searchPath: Syscalls.librarySearchPath())
    }

    public init(version: String, file: String, inode: UInt64, searchPath: [String]) {
        (self.version, self.file, self.inode, self.searchPath) = (version, file, inode, searchPath)
    }

    /// The report as printed.
    public var text: String { ([version, file, String(inode)] + searchPath).joined(separator: "\n") }

    /// The report `text` reads as: a version (numbers joined by dots), an absolute file, an
    /// inode, at least one absolute folder; nil for anything else.
    public init?(text: String) {
        let lines = text.split(separator: "\n").map(String.init)
        guard lines.count >= 4, Self.isVersion(lines[0]), lines[1].hasPrefix("/"), let inode = UInt64(lines[2]),
            lines.dropFirst(3).allSatisfy({ $0.hasPrefix("/") })
        else { return nil }
        self.init(version: lines[0], file: lines[1], inode: inode, searchPath: Array(lines.dropFirst(3)))
    }

    /// Whether `text` reads as a version: numbers joined by dots ("8.14.1").
    static func isVersion(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return text.count <= 32 && parts.count >= 2
            && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }
}
