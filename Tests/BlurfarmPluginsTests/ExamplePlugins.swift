import BlurfarmPlugins
import BlurfarmTestSupport

extension TestPlugins {
    /// A loader for the example plugins `swift build` built beside the executable.
    static let examples = PluginLoader(folders: [buildFolder])
}
