import BlurfarmCore
import BlurfarmPluginABI
import BlurfarmSystem
import Synchronization

/// Loads plugins by name from the configured plugin folders, and nothing else
/// (docs/plugins.md, "Loading"):
///
/// - a name is never a path: `lib<name>.so` is looked for in each folder in turn, and a name
///   with `/` or `..` (or anything but lower-case letters, digits and `-`) is refused;
/// - a folder or file that users other than its owner can write (group or other write bit),
///   or that belongs to a user who is neither root nor this process's user, is refused, and
///   so is a folder above it that belongs to someone else, or that others can write and is
///   not sticky; all checked on descriptors, and the library loaded from the descriptor
///   checked, so that nobody can swap a file in between (``TrustedPath``);
/// - a library that does not load, lacks the entry point `blurfarm_plugin_entry`, or returns
///   a table of an ABI version or with flags this blurfarm does not know, is refused;
/// - a loaded plugin is never unloaded, and loading it again returns the same ``Plugin``.
///
/// A library may instead (or also) export `blurfarm_detector_entry`: a detector
/// (``detector(named:)``), found in the same folders under the same rules.
///
/// Thread-safe: workers load plugins from their task threads.
public final class PluginLoader: Sendable {
    /// The folders searched, in order.
    public let folders: [String]
    private let loaded = Mutex<[String: Plugin]>([:])
    private let detectors = Mutex<[String: Detector]>([:])
    /// Each library opened, by path: a library is opened (and checked) once, whichever of its
    /// entry points is asked for.
    private let libraries = Mutex<[String: LibraryHandle]>([:])

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
        return try load(name, path: try find(name))
    }

    /// The detector named `name`, from the first folder that has `lib<name>.so`.
    ///
    /// - Throws: ``PluginError`` naming the name, folder or file and what is wrong.
    public func detector(named name: String) throws(PluginError) -> Detector {
        if let problem = PluginName.problem(name) { throw problem }
        if let detector = detectors.withLock({ $0[name] }) { return detector }
        let path = try find(name)
        let handle = try library(path)
        guard let symbol = Syscalls.symbol(BLURFARM_DETECTOR_ENTRY_POINT, in: handle) else {
            throw PluginError(path, "has no entry point '\(BLURFARM_DETECTOR_ENTRY_POINT)': it is not a detector")
        }
        typealias Entry = @convention(c) () -> UnsafePointer<blurfarm_detector>?
        let entry = unsafeBitCast(symbol, to: Entry.self)
        guard let table = entry() else { throw PluginError(path, "\(BLURFARM_DETECTOR_ENTRY_POINT) returned no table") }
        let detector = try Detector(table: table, path: path, expectedName: name)
        return detectors.withLock { detectors in
            if let first = detectors[name] { return first }
            detectors[name] = detector
            return detector
        }
    }

    /// The path of `lib<name>.so` in the first folder that has it, that folder checked.
    private func find(_ name: String) throws(PluginError) -> String {
        guard !folders.isEmpty else { throw PluginError("'\(name)'", "no plugin folders are configured") }
        for folder in folders {
            let path = Self.join(folder, PluginName.fileName(name))
            guard Syscalls.status(path) != nil else { continue }
            try TrustedPath.checkFolder(folder)
            return path
        }
        throw PluginError(
            "'\(name)'", "no \(PluginName.fileName(name)) in the plugin folders (\(folders.joined(separator: ", ")))")
    }

    /// The library at `path`, opened once: checked and loaded from the descriptor opened
    /// (``TrustedPath``).
    private func library(_ path: String) throws(PluginError) -> UnsafeMutableRawPointer {
        if let handle = libraries.withLock({ $0[path] }) { return handle.pointer }
        let file = try TrustedPath.openFile(path)
        let handle = LibraryHandle(pointer: try Syscalls.openLibrary(file.number, path: path))
        file.keepOpen()
        return libraries.withLock { libraries in
            if let first = libraries[path] { return first.pointer }
            libraries[path] = handle
            return handle.pointer
        }
    }

    /// A handle `dlopen` returned: the library stays loaded while the process lives, and the
    /// loader lets any thread look symbols up in it.
    private struct LibraryHandle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    /// Every plugin in the folders (each file `lib<name>.so`; for a name in two folders, the
    /// first folder's), and every problem met: a folder that cannot be read or is refused, a
    /// plugin that is refused. Problems do not stop the others from loading.
    public func loadAll() -> (plugins: [Plugin], problems: [PluginError]) {
        var plugins: [Plugin] = [], problems: [PluginError] = []
        var seen: Set<String> = []
        for folder in folders {
            let entries: [String]
            do {
                entries = try Syscalls.folderNames(folder).sorted()
            } catch {
                problems.append(PluginError(folder, "cannot read the plugin folder: \(error.reason)"))
                continue
            }
            let candidates = entries.compactMap { PluginName.name(ofFile: $0) }
            if candidates.isEmpty { continue }
            do throws(PluginError) {
                try TrustedPath.checkFolder(folder)
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
                    // A detector alone (no filter's entry point) is no filter, and no problem.
                    let handle = try library(path)
                    if Syscalls.symbol(BLURFARM_PLUGIN_ENTRY_POINT, in: handle) == nil,
                        Syscalls.symbol(BLURFARM_DETECTOR_ENTRY_POINT, in: handle) != nil
                    {
                        continue
                    }
                    plugins.append(try load(name, path: path))
                } catch {
                    problems.append(error)
                }
            }
        }
        return (plugins, problems)
    }

    /// Opens and checks the library at `path` (``TrustedPath``), loads exactly the file opened,
    /// and reads its table; or returns the plugin already loaded.
    private func load(_ name: String, path: String) throws(PluginError) -> Plugin {
        if let plugin = loaded.withLock({ $0[name] }) { return plugin }
        let handle = try library(path)
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

    static func join(_ folder: String, _ file: String) -> String {
        folder.hasSuffix("/") ? folder + file : folder + "/" + file
    }
}
