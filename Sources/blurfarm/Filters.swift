import ArgumentParser
import BlurfarmCore

/// `blurfarm filters [NAME]`: every filter the farm can run, built-in and plugin, from the
/// one registry the manifest checker, the planner and the workers use; then the output
/// formats, and whether this libvips can write AVIF.
struct Filters: FarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "filters",
        abstract: "List the filters (built-in and plugins) with their parameters, or show one in full.",
        discussion: """
            Plugins are loaded from the configuration's plugin folders (docs/plugins.md); a \
            plugin that fails to load is reported on standard error and left out. With --json, \
            the catalogue (or the one filter) as JSON on standard output (docs/json.md).

            Exit status: 0 listed; 1 no filter has that name; 2 the configuration is invalid.
            """)

    @Argument(help: "A filter to show in full.")
    var name: String?

    @OptionGroup var farm: FarmOptions

    @Flag(help: "Print JSON (docs/json.md) instead of text.")
    var json = false

    func execute() throws {
        let registry = farm.registry(for: try farm.loadOrExit())
        guard let name else {
            if json { return try printJSON(registry.descriptors.map(FilterJSON.init)) }
            for descriptor in registry.descriptors { print(descriptor.listing) }
            print("\noutput formats: " + ImageFormat.extensions.map { ".\($0)" }.joined(separator: " "))
            print(Blurfarm.avifLine)
            return
        }
        guard let descriptor = registry.descriptor(named: name) else {
            throw CommandError(FilterDescriptor.unknown(name, among: registry.descriptors))
        }
        if json { return try printJSON(FilterJSON(descriptor)) }
        print(descriptor.details)
    }
}
