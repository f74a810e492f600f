import BlurfarmKernels
import BlurfarmPlugins
import BlurfarmTestSupport
import Testing

/// The registry of a command that names its filters (`apply`): only the plugins it names, unless
/// one is not found (``FilterRegistry/naming(_:from:)``).
@Suite struct RegistryNamingTests {
    @Test func builtInNamesLoadNoPlugin() {
        let (registry, problems) = FilterRegistry.naming(["gaussian", "motion"], from: TestPlugins.examples)
        #expect(registry.descriptors.map(\.name) == FilterRegistry.builtIn.descriptors.map(\.name))
        #expect(problems.isEmpty)
    }

    @Test func aPluginNamedIsTheOnlyOneLoaded() {
        let (registry, _) = FilterRegistry.naming(["vignette"], from: TestPlugins.examples)
        #expect(registry.descriptor(named: "vignette")?.isPlugin == true)
        #expect(registry.descriptor(named: "zoom") == nil)
    }

    @Test func aNameNotFoundLoadsEveryPluginOfTheFolders() {
        let (registry, _) = FilterRegistry.naming(["nosuch"], from: TestPlugins.examples)
        #expect(registry.descriptor(named: "vignette") != nil && registry.descriptor(named: "zoom") != nil)
    }
}
