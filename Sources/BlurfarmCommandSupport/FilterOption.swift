import BlurfarmCore
import BlurfarmKernels

/// Parses a `--filter` argument such as `gaussian sigma=8` or `motion radius=20 angle=30`
/// against the filter registry.
public enum FilterOption {
    /// The checked filter, or every problem with the text in words.
    public static func parse(_ text: String, registry: FilterRegistry) -> Result<FilterSpec, OptionError> {
        let words = words(of: text)
        guard let name = words.first else {
            return .failure(OptionError("--filter '\(text)': empty filter; expected e.g. 'gaussian sigma=8'"))
        }
        guard let descriptor = registry.descriptor(named: name) else {
            return .failure(OptionError("--filter '\(text)': " + FilterDescriptor.unknown(name, among: registry.descriptors)))
        }
        var arguments: [(name: String, value: ParameterValue)] = []
        for word in words.dropFirst() {
            let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                return .failure(OptionError("--filter '\(text)': '\(word)' is not of the form name=value"))
            }
            let kind = descriptor.parameters.first { $0.name == parts[0] }?.kind
            arguments.append((parts[0], value(of: parts[1], kind: kind)))
        }
        switch descriptor.resolve(arguments) {
        case .success(let spec):
            return .success(spec)
        case .failure(let problems):
            let lines = problems.problems.map { problem -> String in
                if case .unknownParameter(_, _, let suggestion?) = problem {
                    return "\(problem) (did you mean '\(suggestion)'?)"
                }
                return problem.description
            }
            return .failure(OptionError("--filter '\(text)': " + lines.joined(separator: "; ")))
        }
    }

    /// The filter's name in `text`: its first word (nil when it has none).
    public static func name(of text: String) -> String? { words(of: text).first }

    private static func words(of text: String) -> [String] {
        text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    }

    /// The typed value of a `name=value` word, as a manifest types it: the text itself for a
    /// parameter that takes text (a string, a colour); otherwise an integer, a number or
    /// true/false when it is one, else the text (the descriptor then says what it expected).
    public static func value(of text: String, kind: ParameterDescriptor.Kind?) -> ParameterValue {
        if kind?.takesText == true { return .string(text) }
        if let i = Int(text) { return .integer(i) }
        if let d = Double(text), d.isFinite { return .number(d) }
        if text == "true" || text == "false" { return .boolean(text == "true") }
        return .string(text)
    }
}
