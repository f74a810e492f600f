import BlurfarmCore
import BlurfarmKernels
import BlurfarmPlugins
import BlurfarmTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The loader's refusals, each with its exact message, and what it loads.
@Suite struct PluginLoaderTests {
    @Test func theExamplePluginsLoadFromTheBuildFolderWithTheirDeclarations() throws {
        let vignette = try TestPlugins.examples.load(named: "vignette")
        #expect(vignette.descriptor.origin == .plugin(path: TestPlugins.buildFolder + "/libvignette.so"))
        #expect(vignette.descriptor.parameters.map(\.name) == ["strength", "radius"])
        #expect(vignette.descriptor.parameters.map(\.defaultValue) == [.number(0.5), .number(0.5)])
        let zoom = try TestPlugins.examples.load(named: "zoom")
        #expect(zoom.descriptor.parameters.map(\.name) == ["amount", "centre-x", "centre-y"])
        #expect(zoom.descriptor.parameters[0].rangeDescription == "a number >= 0 and <= 50")
        // Loaded once: the same plugin again.
        #expect(try TestPlugins.examples.load(named: "zoom") === zoom)
    }

    @Test(arguments: ["../vignette", "a/b", "..", "/usr/lib/libc", "vignette/.."])
    func aNameIsNeverAPath(name: String) {
        #expect(throws: PluginError(
            "'\(name)'", "a plugin name is never a path: plugins load by name from the plugin folders only"
        )) { try TestPlugins.examples.load(named: name) }
    }

    @Test(arguments: ["Vignette", "", "-x", "zoom.so", "a b"])
    func aNameOutsideTheAlphabetIsRefused(name: String) {
        #expect(throws: PluginError(
            "'\(name)'", "not a plugin name: lower-case letters, digits and '-', starting with a letter"
        )) { try TestPlugins.examples.load(named: name) }
    }

    @Test func aMissingPluginNamesTheFoldersSearched() {
        let loader = PluginLoader(folders: ["/nonexistent/a", TestPlugins.buildFolder])
        #expect(throws: PluginError(
            "'sharpen'", "no libsharpen.so in the plugin folders (/nonexistent/a, \(TestPlugins.buildFolder))"
        )) { try loader.load(named: "sharpen") }
    }

    @Test(.tags(.process)) func aFolderOthersCanWriteIsRefused() throws {
        let folder = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try TestPlugins.compile("invert.c", as: "invert", into: folder)
        try TestPlugins.setMode(0o777, folder)
        #expect(throws: PluginError(
            folder.path, "the plugin folder is writable by other users (mode 777): no plugin is loaded from it"
        )) { try PluginLoader(folders: [folder.path]).load(named: "invert") }
        try TestPlugins.setMode(0o775, folder)
        #expect(throws: PluginError(
            folder.path, "the plugin folder is writable by its group (mode 775): no plugin is loaded from it"
        )) { try PluginLoader(folders: [folder.path]).load(named: "invert") }
        try TestPlugins.setMode(0o755, folder)
        #expect(try PluginLoader(folders: [folder.path]).load(named: "invert").descriptor.name == "invert")
    }

    @Test(.tags(.process)) func aFileOthersCanWriteIsRefused() throws {
        let folder = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try TestPlugins.compile("invert.c", as: "invert", into: folder)
        try TestPlugins.setMode(0o757, URL(fileURLWithPath: path))
        #expect(throws: PluginError(path, "the plugin file is writable by other users (mode 757): it is not loaded")) {
            try PluginLoader(folders: [folder.path]).load(named: "invert")
        }
    }

    /// Only root can give a file away, so this runs as root (as CI does).
    @Test(.enabled(if: geteuid() == 0, "giving a file to another user needs root"), .tags(.process, .root))
    func aFolderOrFileOwnedBySomeoneElseIsRefused() throws {
        let folder = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try TestPlugins.compile("invert.c", as: "invert", into: folder)
        try FileManager.default.setAttributes([.ownerAccountID: 4242], ofItemAtPath: folder.path)
        #expect(throws: PluginError(
            folder.path, "the plugin folder belongs to user 4242, neither root nor this user: no plugin is loaded from it"
        )) { try PluginLoader(folders: [folder.path]).load(named: "invert") }
        try FileManager.default.setAttributes([.ownerAccountID: 0], ofItemAtPath: folder.path)
        try FileManager.default.setAttributes([.ownerAccountID: 4242], ofItemAtPath: path)
        #expect(throws: PluginError(
            path, "the plugin file belongs to user 4242, neither root nor this user: it is not loaded"
        )) { try PluginLoader(folders: [folder.path]).load(named: "invert") }
    }

    @Test(.tags(.process)) func anUnknownABIVersionIsRefusedNamingBothVersions() throws {
        let folder = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try TestPlugins.compile("misbehave.c", as: "old", into: folder, defines: ["NAME=\"old\"", "ABI=7"])
        #expect(throws: PluginError(path, "built for plugin ABI version 7; this blurfarm supports version 1")) {
            try PluginLoader(folders: [folder.path]).load(named: "old")
        }
    }

    /// `regions` and `invert` place any filter in its chain (docs/manifest.md), so no plugin
    /// may take a parameter of those names.
    @Test(.tags(.process), arguments: ["regions", "invert"])
    func aParameterNamedAsEveryFiltersRegionsIsRefused(name: String) throws {
        let folder = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try TestPlugins.compile(
            "misbehave.c", as: "placed", into: folder, defines: ["NAME=\"placed\"", "PARAMETER=\"\(name)\""])
        #expect(throws: PluginError(
            path, "parameter '\(name)': 'regions' and 'invert' are every filter's (where it applies in its chain), not a plugin's"
        )) { try PluginLoader(folders: [folder.path]).load(named: "placed") }
        let fine = try TestPlugins.compile(
            "misbehave.c", as: "amount", into: folder, defines: ["NAME=\"amount\"", "PARAMETER=\"\(name)-x\""])
        #expect(try PluginLoader(folders: [folder.path]).load(named: "amount").descriptor.parameters.map(\.name) == ["\(name)-x"], "\(fine)")
    }

    @Test(.tags(.process)) func aLibraryWithoutTheEntryPointIsRefused() throws {
        let folder = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try TestPlugins.compile(
            "misbehave.c", as: "noentry", into: folder, defines: ["NAME=\"noentry\"", "NO_ENTRY"])
        #expect(throws: PluginError(path, "has no entry point 'blurfarm_plugin_entry'")) {
            try PluginLoader(folders: [folder.path]).load(named: "noentry")
        }
    }

    @Test func aFileThatIsNotALibraryIsRefused() throws {
        let folder = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("libjunk.so").path
        try String(repeating: "not a shared library\n", count: 8).write(toFile: path, atomically: true, encoding: .utf8)
        try TestPlugins.setMode(0o644, URL(fileURLWithPath: path))
        #expect(throws: PluginError(path, "cannot be loaded: \(path): invalid ELF header")) {
            try PluginLoader(folders: [folder.path]).load(named: "junk")
        }
    }

    @Test(.tags(.process)) func aTableWhoseNameIsNotTheFilesIsRefused() throws {
        let folder = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try TestPlugins.compile("misbehave.c", as: "alias", into: folder, defines: ["NAME=\"other\""])
        #expect(throws: PluginError(path, "the plugin calls itself 'other'; its file must be named libother.so")) {
            try PluginLoader(folders: [folder.path]).load(named: "alias")
        }
    }

    /// A plugin that fails to load is reported and the others load: blurfarm keeps working.
    @Test(.tags(.process)) func loadingAFolderSkipsWhatFailsAndKeepsTheRest() throws {
        let folder = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try TestPlugins.compile("invert.c", as: "invert", into: folder)
        let old = try TestPlugins.compile("misbehave.c", as: "old", into: folder, defines: ["NAME=\"old\"", "ABI=2"])
        let junk = folder.appendingPathComponent("libjunk.so").path
        try String(repeating: "x", count: 100).write(toFile: junk, atomically: true, encoding: .utf8)
        try TestPlugins.setMode(0o644, URL(fileURLWithPath: junk))
        let clash = try TestPlugins.compile(
            "misbehave.c", as: "gaussian", into: folder, defines: ["NAME=\"gaussian\""])
        let (registry, problems) = FilterRegistry.withPlugins(from: PluginLoader(folders: [folder.path]), mayRun: false)
        #expect(registry.descriptors.map(\.name) == FilterRegistry.builtIn.descriptors.map(\.name) + ["invert"])
        #expect(problems.map(\.description).sorted() == [
            "\(clash): not loaded: the name 'gaussian' is taken by built-in",
            "\(junk): cannot be loaded: \(junk): invalid ELF header",
            "\(old): built for plugin ABI version 2; this blurfarm supports version 1",
        ])
    }

    @Test(.tags(.process)) func aPluginReturningAnErrorFailsWithItsMessage() throws {
        let folder = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try TestPlugins.compile("misbehave.c", as: "fail", into: folder, defines: ["NAME=\"fail\"", "FAIL"])
        let plugin = try PluginLoader(folders: [folder.path]).load(named: "fail")
        let filter = PluginFilter(plugin: plugin, spec: FilterSpec(name: "fail", arguments: [:]), mayRun: true)
        let image = PixelBuffer(rect: Rect(width: 4, height: 4))
        #expect(throws: FilterFailure(
            filter: "fail", message: "plugin 'fail' run failed (BLURFARM_ERROR_FAILED, -3): this plugin always fails"
        )) { try filter.apply(input: image, output: PixelBuffer(rect: image.rect), image: image.rect) }
    }

    @Test func theCoordinatorsPluginFiltersNeverRun() throws {
        let plugin = try TestPlugins.examples.load(named: "vignette")
        let filter = PluginFilter(plugin: plugin, spec: FilterSpec(name: "vignette", arguments: [:]), mayRun: false)
        let image = PixelBuffer(rect: Rect(width: 4, height: 4))
        #expect(throws: FilterFailure(filter: "vignette", message: "plugin 'vignette' runs in worker processes only")) {
            try filter.apply(input: image, output: PixelBuffer(rect: image.rect), image: image.rect)
        }
    }
}

extension FilterFailure: Equatable {
    public static func == (a: FilterFailure, b: FilterFailure) -> Bool { a.filter == b.filter && a.message == b.message }
}
