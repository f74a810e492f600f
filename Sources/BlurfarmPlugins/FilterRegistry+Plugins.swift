import BlurfarmCore
import BlurfarmKernels

extension FilterRegistry {
    /// Adds `plugin` as a filter; its filters call the plugin only when `mayRun` (workers),
    /// and refuse otherwise (the coordinator).
    ///
    /// - Throws: ``PluginError`` when a filter of that name is registered already (a built-in
    ///   filter, or a plugin of the same name in an earlier folder).
    public mutating func register(_ plugin: Plugin, mayRun: Bool) throws(PluginError) {
        let name = plugin.descriptor.name
        if let existing = descriptor(named: name) {
            throw PluginError(plugin.path, "not loaded: the name '\(name)' is taken by \(existing.origin)")
        }
        register(plugin.descriptor) { spec, _ in PluginFilter(plugin: plugin, spec: spec, mayRun: mayRun) }
    }

    /// The filters of `base` (the built-in ones by default) and every plugin `loader` finds in
    /// its folders, and every problem met (a plugin that fails to load is reported here and
    /// left out; the rest work).
    public static func withPlugins(
        from loader: PluginLoader, mayRun: Bool, base: FilterRegistry = .builtIn
    ) -> (FilterRegistry, [PluginError]) {
        var registry = base
        var (plugins, problems) = loader.loadAll()
        for plugin in plugins {
            do throws(PluginError) {
                try registry.register(plugin, mayRun: mayRun)
            } catch {
                problems.append(error)
            }
        }
        return (registry, problems)
    }

    /// The built-in filters and, loaded by name from `loader`, the plugins among `names`, for
    /// checking and planning (`mayRun` false): the registry of a command that names its filters
    /// (`apply`), which so opens no plugin it does not use (each is a library to load, and a
    /// plugin written in Swift brings the shared Swift runtime: milliseconds of every start).
    /// When a name is neither built in nor a plugin that loads, every plugin of the folders, as
    /// ``withPlugins(from:mayRun:base:)``, with the problems met: an error then lists the
    /// filters there are, and a problem says why a plugin did not load.
    public static func naming(_ names: [String], from loader: PluginLoader) -> (FilterRegistry, [PluginError]) {
        var registry = FilterRegistry.builtIn
        for name in names where registry.descriptor(named: name) == nil {
            do throws(PluginError) {
                try registry.register(loader.load(named: name), mayRun: false)
            } catch {
                return withPlugins(from: loader, mayRun: false)
            }
        }
        return (registry, [])
    }
}
