import BlurfarmCore
import BlurfarmPluginABI
import Synchronization

/// Loads plugins by name from the configured plugin folders, and nothing else
/// (docs/plugins.md, "Loading"):
///
/// - a name is never a path: `lib<name>.so` is looked for in each folder in turn, and a name
///   with `/` or `..` (or anything but lower-case letters, digits and `-`) is refused;
/// - a folder or file that users other than its owner can write (group or other write bit),
///   or that belongs to a user who is neither root nor this process's user, is refused;
/// - a library that does not load, lacks the entry point `blurfarm_plugin_entry`, or returns
///   a table of an ABI version or with flags this blurfarm does not know, is refused;
/// - a loaded plugin is never unloaded, and loading it again returns the same ``Plugin``.
///
/// Thread-safe: workers load plugins from their task threads.
public final class PluginLoader: Sendable {
    /// The folders searched, in order.
    public let folders: [String]
    private let loaded = Mutex<[String: Plugin]>([:])

    /// A loader for `folders` (absolute paths, or relative to the working folder).
    public init(folders: [String]) {
        self.folders = folders
    }

    /// The plugin named `name`, from the first folder that has `lib<name>.so`.
    ///
    /// - Throws: ``PluginError`` naming the name, folder or file and what is wrong.
    public func load(named name: String) throws(PluginError) -> Plugin {
        if let problem = PluginName.problem(name) { throw problem }
        if let plugin = loaded.withLock({ $0[name] }) { return plugin }
        guard !folders.isEmpty else { throw PluginError("'\(name)'", "no plugin folders are configured") }
        for folder in folders {
            let path = Self.join(folder, PluginName.fileName(name))
            guard case .success = Syscalls.status(path) else { continue }
            try Self.checkFolder(folder)
            return try load(name, path: path)
        }
        throw PluginError(
            "'\(name)'", "no \(PluginName.fileName(name)) in the plugin folders (\(folders.joined(separator: ", ")))")
    }

    /// Every plugin in the folders (each file `lib<name>.so`; for a name in two folders, the
    /// first folder's), and every problem met: a folder that cannot be read or is refused, a
    /// plugin that is refused. Problems do not stop the others from loading.
    public func loadAll() -> (plugins: [Plugin], problems: [PluginError]) {
        var plugins: [Plugin] = [], problems: [PluginError] = []
        var seen: Set<String> = []
        for folder in folders {
            let entries: [String]
            switch Syscalls.folderEntries(folder) {
            case .failure(let reason):
                problems.append(PluginError(folder, "cannot read the plugin folder: \(reason)"))
                continue
            case .success(let names): entries = names.sorted()
            }
            let candidates = entries.compactMap { PluginName.name(ofFile: $0) }
            if candidates.isEmpty { continue }
            do throws(PluginError) {
                try Self.checkFolder(folder)
            } catch {
                problems.append(error)
                continue
            }
            for name in candidates where !seen.contains(name) {
                let path = Self.join(folder, PluginName.fileName(name))
                if let problem = PluginName.problem(name) {
                    problems.append(PluginError(path, "\(problem.subject) is \(problem.message)"))
                    continue
                }
                seen.insert(name)
                do throws(PluginError) {
                    plugins.append(try load(name, path: path))
                } catch {
                    problems.append(error)
                }
            }
        }
        return (plugins, problems)
    }

    /// Checks, opens and reads the library at `path`, or returns the plugin already loaded.
    private func load(_ name: String, path: String) throws(PluginError) -> Plugin {
        if let plugin = loaded.withLock({ $0[name] }) { return plugin }
        try Self.checkFile(path)
        let handle: UnsafeMutableRawPointer
        switch Syscalls.openLibrary(path) {
        case .failure(let reason): throw PluginError(path, "cannot be loaded: \(reason)")
        case .success(let h): handle = h
        }
        guard let symbol = Syscalls.symbol(BLURFARM_PLUGIN_ENTRY_POINT, in: handle) else {
            throw PluginError(path, "has no entry point '\(BLURFARM_PLUGIN_ENTRY_POINT)'")
        }
        typealias Entry = @convention(c) () -> UnsafePointer<blurfarm_plugin>?
        let entry = unsafeBitCast(symbol, to: Entry.self)
        guard let table = entry() else { throw PluginError(path, "\(BLURFARM_PLUGIN_ENTRY_POINT) returned no table") }
        let plugin = try Plugin(table: table, path: path, expectedName: name)
        return loaded.withLock { loaded in
            if let first = loaded[name] { return first }
            loaded[name] = plugin
            return plugin
        }
    }

    /// Refuses a folder that is not a folder, that others can write, or whose owner is
    /// neither root nor this user.
    static func checkFolder(_ folder: String) throws(PluginError) {
        switch Syscalls.status(folder) {
        case .failure(let reason): throw PluginError(folder, "cannot use the plugin folder: \(reason)")
        case .success(let status):
            guard status.isDirectory else { throw PluginError(folder, "the plugin folder is not a folder") }
            try checkWriters(status, folder, what: "plugin folder", consequence: "no plugin is loaded from it")
        }
    }

    /// Refuses a file that is not a regular file, that others can write, whose owner is
    /// neither root nor this user, or whose real folder (after symbolic links) is refused.
    static func checkFile(_ path: String) throws(PluginError) {
        switch Syscalls.status(path) {
        case .failure(let reason): throw PluginError(path, "cannot use the plugin file: \(reason)")
        case .success(let status):
            guard status.isRegularFile else { throw PluginError(path, "the plugin file is not a regular file") }
            try checkWriters(status, path, what: "plugin file", consequence: "it is not loaded")
        }
        guard let real = realPath(path) else { throw PluginError(path, "cannot resolve the plugin file's path") }
        if let slash = real.lastIndex(of: "/") {
            let folder = slash == real.startIndex ? "/" : String(real[..<slash])
            try checkFolder(folder)
        }
    }

    private static func realPath(_ path: String) -> String? { Syscalls.realPath(path) }

    private static func checkWriters(
        _ status: FileStatus, _ path: String, what: String, consequence: String
    ) throws(PluginError) {
        if status.permissions & 0o022 != 0 {
            let others = status.permissions & 0o002 != 0 ? "other users" : "its group"
            throw PluginError(
                path,
                "the \(what) is writable by \(others) (mode \(String(status.permissions, radix: 8))): \(consequence)")
        }
        if status.owner != 0 && status.owner != Syscalls.effectiveUser {
            throw PluginError(
                path, "the \(what) belongs to user \(status.owner), neither root nor this user: \(consequence)")
        }
    }

    static func join(_ folder: String, _ file: String) -> String {
        folder.hasSuffix("/") ? folder + file : folder + "/" + file
    }
}
