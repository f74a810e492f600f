/// Filters in words, as `blurfarm filters` and `--filter` say them.
extension FilterDescriptor {
    /// The filter as `blurfarm filters` lists it: its name and origin, its summary, a line per
    /// parameter (``ParameterDescriptor/brief``), indented. Lines separated by newlines, none after the last.
    public var listing: String {
        (["\(name)  (\(origin))", "    \(summary)"] + parameters.map { "    " + $0.brief }).joined(separator: "\n")
    }

    /// The filter in full, as `blurfarm filters NAME` shows it: summary, origin, where it runs,
    /// each parameter with its range, default and summary. Lines separated by newlines, none after the last.
    public var details: String {
        var lines = [
            "\(name): \(summary)", "origin: \(origin)",
            isPlugin ? "runs in: worker processes" : "runs in: the in-process engine or worker processes",
            parameters.isEmpty ? "parameters: none" : "parameters:",
        ]
        for parameter in parameters { lines += ["  " + parameter.brief, "      \(parameter.summary)"] }
        return lines.joined(separator: "\n")
    }

    /// What a filter name that none of `descriptors` has is told: `unknown filter 'gausian'
    /// (did you mean 'gaussian'?); available: gaussian, motion, …`.
    public static func unknown(_ name: String, among descriptors: [FilterDescriptor]) -> String {
        let names = descriptors.map(\.name)
        return "unknown filter '\(name)'" + (closestName(to: name, among: names).map { " (did you mean '\($0)'?)" } ?? "")
            + "; available: " + names.joined(separator: ", ")
    }
}

extension ParameterDescriptor {
    /// `name: range, default d` (or `, required`, or `, default: derived (see its description)`).
    public var brief: String {
        let value = defaultValue.map { ", default \($0)" }
            ?? (isRequired ? ", required" : ", default: derived (see its description)")
        return "\(name): \(rangeDescription)\(value)"
    }
}

/// A filter as `filters --json` prints it (docs/json.md).
public struct FilterJSON: Encodable, Sendable {
    public struct Parameter: Encodable, Sendable {
        public var name: String
        /// The values accepted, in words (`a number > 0 and <= 1000`).
        public var range: String
        /// The default as written in a manifest; absent when required or derived.
        public var `default`: String?
        public var required: Bool
        public var summary: String
    }

    public var name: String
    /// `built-in`, or the plugin's library path.
    public var origin: String
    public var plugin: Bool
    public var summary: String
    public var parameters: [Parameter]

    public init(_ descriptor: FilterDescriptor) {
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
