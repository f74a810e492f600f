import BlurfarmSystem
import Foundation

/// The version of the libvips the workers load, as recipes name it, kept in the state folder
/// (`libvips-version.json`) with what decides which file the dynamic loader maps for it, so
/// that a run knows it without mapping libvips: mapping it takes about 25 ms, during which every
/// thread the process starts waits for the loader (docs/performance-history.md).
///
/// The version kept holds while the loader would find the same file: the file as found and its
/// real path are the same, and these are as recorded (their ``FileStamp``: inode, size, times, or
/// absence): that file (kept only when it is the very file the worker mapped, by inode);
/// `/etc/ld.so.cache` and `/etc/ld.so.preload`; the worker executable; every folder the loader
/// searches (a worker's `LD_LIBRARY_PATH`, run path and the system's, as `blurfarm-worker
/// --libvips-version` says them) and the `glibc-hwcaps` folders in them; and the variables
/// `LD_LIBRARY_PATH`, `LD_PRELOAD`, `LD_AUDIT` and `GLIBC_TUNABLES`. A package upgrade replaces the file and rewrites the
/// loader's cache; a library put in a searched folder changes that folder. Anything wrong with
/// the file means the version is asked again (of a worker): it is a cache, never a source of
/// truth.
public struct LibvipsVersionCache: Codable, Equatable, Sendable {
    /// The file's name in the state folder.
    public static let fileName = "libvips-version.json"
    /// A file larger than this is not read.
    static let maximumBytes = 1 << 20

    /// The version ("8.14.1").
    public var version: String
    /// The library's file as the loader found it ("/lib/x86_64-linux-gnu/libvips.so.42").
    public var file: String
    /// The folders the loader searches, in order.
    public var searchPath: [String]
    /// What decides the loader's choice, as it was (``loader(file:searchPath:worker:environment:)``).
    var loader: Loader

    /// What decides which file the loader maps: the real path of the file it found, the
    /// environment variables it reads, and what is at each path it looks at (its
    /// ``FileStamp``, folders included; nil: nothing).
    struct Loader: Codable, Equatable, Sendable {
        var library: String
        var environment: [String: String]
        var entries: [String: FileStamp?]
    }

    /// The cache of what a worker at `worker` in an `environment` reported (`LibvipsReport`'s
    /// fields: libvips's `version`, the `file` the loader found, its `inode`, and the loader's
    /// `searchPath`); nil when the file it mapped is not the one at its real path now (replaced
    /// meanwhile: the version may not be that file's) or the loader's search path is unknown.
    public init?(
        version: String, file: String, inode: UInt64, searchPath: [String], worker: String, environment: [String: String]
    ) {
        guard !searchPath.isEmpty,
            let loader = Self.loader(file: file, searchPath: searchPath, worker: worker, environment: environment),
            loader.entries[loader.library]??.inode == inode
        else { return nil }
        (self.version, self.file, self.searchPath, self.loader) = (version, file, searchPath, loader)
    }

    /// The environment variables that change what the loader maps (`GLIBC_TUNABLES` can choose
    /// the `glibc-hwcaps` level).
    static let variables = ["LD_LIBRARY_PATH", "LD_PRELOAD", "LD_AUDIT", "GLIBC_TUNABLES"]

    /// What decides which file the loader maps for `file`'s name, now (the type's documentation).
    static func loader(file: String, searchPath: [String], worker: String, environment: [String: String]) -> Loader? {
        guard let library = Syscalls.realPath(file) else { return nil }
        var paths = [library, "/etc/ld.so.cache", "/etc/ld.so.preload", worker]
        for folder in searchPath {
            paths.append(folder)
            let hwcaps = folder + "/glibc-hwcaps"
            if let levels = try? FileManager.default.contentsOfDirectory(atPath: hwcaps) {
                paths += [hwcaps] + levels.map { hwcaps + "/" + $0 }
            }
        }
        return Loader(
            library: library,
            environment: Dictionary(uniqueKeysWithValues: Self.variables.map { ($0, environment[$0] ?? "") }),
            entries: Dictionary(paths.map { ($0, FileStamp.ofEntry($0)) }, uniquingKeysWith: { first, _ in first }))
    }

    /// The version kept in the state folder `stateFolder` when the loader would still find the
    /// same file for a worker at `worker` in `environment`; nil otherwise, or when there is no
    /// such file or it cannot be read as one. Never follows a link, never waits on a FIFO.
    public static func version(inStateFolder stateFolder: String, worker: String, environment: [String: String]) -> String? {
        guard let kept = read(stateFolder),
            let now = loader(file: kept.file, searchPath: kept.searchPath, worker: worker, environment: environment),
            now == kept.loader
        else { return nil }
        return kept.version
    }

    /// Writes this cache into the state folder `stateFolder` (creating it when missing),
    /// atomically.
    /// - Throws: ``StateError`` naming the file.
    public func save(inStateFolder stateFolder: String) throws(StateError) {
        try JobStateFolder.writeJSON(self, named: Self.fileName, in: stateFolder, what: "libvips's version")
    }

    /// The cache in `stateFolder`, or nil when there is no such regular file or it cannot be
    /// read as one.
    static func read(_ stateFolder: String) -> LibvipsVersionCache? {
        JobStateFolder.readJSON(LibvipsVersionCache.self, named: fileName, in: stateFolder, maximumBytes: maximumBytes)
    }
}
