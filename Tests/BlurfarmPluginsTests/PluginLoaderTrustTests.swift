import BlurfarmPlugins
import BlurfarmTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The folders above a plugin folder are trusted as much as the folder: the loader checks each
/// of them on the descriptor it walks through, and loads the file it opened, so that nobody who
/// can rename inside one of them can swap in a library of their own.
@Suite(.tags(.process), .blocking) struct PluginLoaderTrustTests {
    @Test func aFolderAboveThePluginFolderThatOthersCanWriteIsRefusedUnlessSticky() throws {
        let base = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: base) }
        let shared = base.appendingPathComponent("shared")
        let plugins = shared.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        try TestPlugins.setMode(0o755, plugins)
        try TestPlugins.compile("invert.c", as: "invert", into: plugins)
        try TestPlugins.setMode(0o777, shared)
        #expect(throws: PluginError(
            shared.path,
            "a folder above the plugin folder \(plugins.path) is writable by other users and not sticky (mode 777): "
                + "no plugin is loaded from it"
        )) { try PluginLoader(folders: [plugins.path]).load(named: "invert") }
        // Reached through a symbolic link, the folders of the link's target are checked.
        let link = base.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "shared/plugins")
        try TestPlugins.setMode(0o775, shared)
        #expect(throws: PluginError(
            shared.path,
            "a folder above the plugin folder \(link.path) is writable by its group and not sticky (mode 775): "
                + "no plugin is loaded from it"
        )) { try PluginLoader(folders: [link.path]).load(named: "invert") }
        let (_, problems) = PluginLoader(folders: [link.path]).loadAll()
        #expect(problems.map(\.subject) == [shared.path])
        // Sticky (as /tmp): nobody can rename or remove what belongs to someone else.
        try TestPlugins.setMode(0o1777, shared)
        #expect(try PluginLoader(folders: [plugins.path]).load(named: "invert").descriptor.name == "invert")
        #expect(try PluginLoader(folders: [link.path]).load(named: "invert").descriptor.name == "invert")
    }

    /// A plugin file that is a symbolic link is loaded from its target, whose folders are
    /// checked as well.
    @Test func aPluginFileLinkedIntoAFolderOthersCanWriteIsRefused() throws {
        let base = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: base) }
        let elsewhere = base.appendingPathComponent("elsewhere")
        let library = try TestPlugins.compile("invert.c", as: "invert", into: elsewhere)
        let plugins = base.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        try TestPlugins.setMode(0o755, plugins)
        let link = plugins.appendingPathComponent("libinvert.so").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: library)
        try TestPlugins.setMode(0o777, elsewhere)
        #expect(throws: PluginError(
            elsewhere.path,
            "a folder above the plugin file \(link) is writable by other users and not sticky (mode 777): it is not loaded"
        )) { try PluginLoader(folders: [plugins.path]).load(named: "invert") }
        // Sticky is enough above a plugin, not for the folder that holds it.
        try TestPlugins.setMode(0o1777, elsewhere)
        #expect(throws: PluginError(
            elsewhere.path, "the plugin folder is writable by other users (mode 1777): no plugin is loaded from it"
        )) { try PluginLoader(folders: [plugins.path]).load(named: "invert") }
        try TestPlugins.setMode(0o755, elsewhere)
        #expect(try PluginLoader(folders: [plugins.path]).load(named: "invert").descriptor.name == "invert")
    }

    /// The race the checks exist for: a second user who owns a folder above the plugin folder
    /// keeps swapping (renaming) the plugin folder between a good library and an evil one whose
    /// constructor leaves a mark, while the loader is asked for the plugin again and again. It
    /// must refuse every time (the folder above belongs to someone else), and the evil
    /// constructor must never run. Needs root, to give the folder away (CI runs as root).
    @Test(.enabled(if: geteuid() == 0, "giving a folder to a second user needs root"), .tags(.root))
    func aSecondUserSwappingThePluginFolderNeverGetsALibraryLoaded() throws {
        let uid = try SecondUser.ensure()
        let base = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: base) }
        let theirs = base.appendingPathComponent("theirs")
        let marker = base.appendingPathComponent("evil-ran").path
        let good = theirs.appendingPathComponent("plugins"), evil = theirs.appendingPathComponent("evil")
        try TestPlugins.compile("misbehave.c", as: "swap", into: good, defines: ["NAME=\"swap\""])
        try TestPlugins.compile("misbehave.c", as: "swap", into: evil, defines: ["NAME=\"swap\"", "MARKER=\"\(marker)\""])
        for folder in [theirs, good, evil] { try TestPlugins.setMode(0o755, folder) }
        try FileManager.default.setAttributes([.ownerAccountID: uid], ofItemAtPath: theirs.path)
        let plugins = good
        // Exchanges the two folders (renameat2 RENAME_EXCHANGE) as fast as it can: `plugins`
        // always exists, the good library in it one moment and the evil one the next.
        let swapper = SecondUser.process([
            "/usr/bin/python3", "-c",
            """
            import ctypes, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            os.chdir(sys.argv[1])
            while True:
                if libc.renameat2(-100, b"plugins", -100, b"evil", 2) != 0:
                    sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
            """,
            theirs.path,
        ])
        try swapper.run()
        defer {
            // SIGKILL: the test runner's threads block SIGTERM, and its children inherit that.
            kill(swapper.processIdentifier, SIGKILL)
            swapper.waitUntilExit()
        }
        var loaded = 0, refusedForTheOwner = 0
        let refusal = PluginError(
            theirs.path,
            "a folder above the plugin folder \(plugins.path) belongs to user \(uid), neither root nor this user: "
                + "no plugin is loaded from it")
        for _ in 0..<400 {
            do throws(PluginError) {
                _ = try PluginLoader(folders: [plugins.path]).load(named: "swap")
                loaded += 1
            } catch {
                if error == refusal { refusedForTheOwner += 1 }
            }
            _ = PluginLoader(folders: [plugins.path]).loadAll()
        }
        #expect(swapper.isRunning, "the second user's process stopped early")
        #expect(loaded == 0)
        #expect(refusedForTheOwner > 0, "the loader never got as far as the plugin folder")
        #expect(!FileManager.default.fileExists(atPath: marker), "the evil library's constructor ran")
    }
}
