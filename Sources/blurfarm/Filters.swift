import ArgumentParser
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels

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
            for descriptor in registry.descriptors {
                print("\(descriptor.name)  (\(descriptor.origin))")
                print("    \(descriptor.summary)")
                for parameter in descriptor.parameters { print("    " + Self.brief(parameter)) }
            }
            print("\noutput formats: " + ImageFormat.extensions.map { ".\($0)" }.joined(separator: " "))
            print(Blurfarm.avifLine)
            return
        }
        guard let descriptor = registry.descriptor(named: name) else {
            var message = "unknown filter '\(name)'"
            if let near = closestName(to: name, among: registry.descriptors.map(\.name)) {
                message += " (did you mean '\(near)'?)"
            }
            throw CommandError(message + "; available: " + registry.descriptors.map(\.name).joined(separator: ", "))
        }
        if json { return try printJSON(FilterJSON(descriptor)) }
        print("\(descriptor.name): \(descriptor.summary)")
        print("origin: \(descriptor.origin)")
        print(descriptor.isPlugin ? "runs in: worker processes" : "runs in: the in-process engine or worker processes")
        print(descriptor.parameters.isEmpty ? "parameters: none" : "parameters:")
        for parameter in descriptor.parameters {
            print("  \(parameter.name): \(parameter.rangeDescription)\(Self.defaultText(parameter))")
            print("      \(parameter.summary)")
        }
    }

    /// `name: range, default d`, for the list.
    static func brief(_ parameter: ParameterDescriptor) -> String {
        "\(parameter.name): \(parameter.rangeDescription)\(defaultText(parameter))"
    }

    static func defaultText(_ parameter: ParameterDescriptor) -> String {
        if let value = parameter.defaultValue { return ", default \(value)" }
        return parameter.isRequired ? ", required" : ", default: derived (see its description)"
    }
}

/// A filter as `filters --json` prints it (docs/json.md).
struct FilterJSON: Encodable {
    struct Parameter: Encodable {
        var name: String
        /// The values accepted, in words (`a number > 0 and <= 1000`).
        var range: String
        /// The default as written in a manifest; absent when required or derived.
        var `default`: String?
        var required: Bool
        var summary: String
    }

    var name: String
    /// `built-in`, or the plugin's library path.
    var origin: String
    var plugin: Bool
    var summary: String
    var parameters: [Parameter]

    init(_ descriptor: FilterDescriptor) {
        name = descriptor.name
        origin = "\(descriptor.origin)"
        plugin = descriptor.isPlugin
        summary = descriptor.summary
        parameters = descriptor.parameters.map {
            Parameter(
                name: $0.name, range: $0.rangeDescription, default: $0.defaultValue.map { "\($0)" },
                required: $0.isRequired, summary: $0.summary)
        }
    }
}
