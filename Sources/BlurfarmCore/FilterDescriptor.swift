/// A value given to a filter parameter.
public enum ParameterValue: Hashable, Sendable, CustomStringConvertible {
    case number(Double)
    case integer(Int)
    case boolean(Bool)
    case string(String)

    /// The value as a number, for `number` and `integer` values.
    public var doubleValue: Double? {
        switch self {
        case .number(let v): v
        case .integer(let v): Double(v)
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .number(let v):
            v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v)
        case .integer(let v): String(v)
        case .boolean(let v): String(v)
        case .string(let v): v
        }
    }
}

/// One parameter a filter takes: its name, type, default and allowed range.
public struct ParameterDescriptor: Sendable {
    /// The type of a parameter.
    public enum Kind: Sendable, Equatable {
        /// A decimal number (integers are accepted).
        case number
        /// A whole number.
        case integer
        case boolean
        /// A string, one of `choices` when that is not empty.
        case string(choices: [String])
        /// A colour with alpha, `#rrggbbaa` or `#rrggbb` (``RGBAColour``), given as a string;
        /// its canonical value is the lower-case `#rrggbbaa` string.
        case colour

        /// Whether a value of this kind is its text whatever it looks like (a string or a
        /// colour: `2` is the text "2", not a number).
        public var takesText: Bool {
            switch self {
            case .string, .colour: true
            case .number, .integer, .boolean: false
            }
        }
    }

    public let name: String
    public let kind: Kind
    /// The value used when the parameter is not given; `nil` when the filter derives it
    /// (documented in `summary`) or the parameter is required (`isRequired`).
    public let defaultValue: ParameterValue?
    /// Whether the parameter must be given.
    public let isRequired: Bool
    /// The smallest allowed value, for numbers; `minimumIsExclusive` makes it a strict bound.
    public let minimum: Double?
    public let minimumIsExclusive: Bool
    /// The largest allowed value, for numbers (inclusive).
    public let maximum: Double?
    /// One line: what the parameter means, with its unit.
    public let summary: String

    public init(
        name: String, kind: Kind, defaultValue: ParameterValue? = nil, isRequired: Bool = false,
        minimum: Double? = nil, minimumIsExclusive: Bool = false, maximum: Double? = nil,
        summary: String
    ) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.isRequired = isRequired
        self.minimum = minimum
        self.minimumIsExclusive = minimumIsExclusive
        self.maximum = maximum
        self.summary = summary
    }

    /// The allowed range in words, e.g. "a number > 0 and <= 500", for messages.
    public var rangeDescription: String {
        var kindWord: String
        switch kind {
        case .number: kindWord = "a number"
        case .integer: kindWord = "an integer"
        case .boolean: return "true or false"
        case .string(let choices):
            return choices.isEmpty ? "a string" : "one of " + choices.map { "'\($0)'" }.joined(separator: ", ")
        case .colour: return "a colour '#rrggbbaa' or '#rrggbb'"
        }
        var bounds: [String] = []
        if let minimum { bounds.append((minimumIsExclusive ? "> " : ">= ") + ParameterValue.number(minimum).description) }
        if let maximum { bounds.append("<= " + ParameterValue.number(maximum).description) }
        if !bounds.isEmpty { kindWord += " " + bounds.joined(separator: " and ") }
        return kindWord
    }

    /// Checks one value against the declaration; returns it in canonical form (an integer
    /// given for a number becomes a number) or the problem in words.
    public func check(_ value: ParameterValue) -> Result<ParameterValue, ParameterProblem> {
        // The message is built only for a value that is refused.
        var wrong: ParameterProblem { .invalidValue(parameter: name, expected: rangeDescription) }
        switch kind {
        case .boolean:
            guard case .boolean = value else { return .failure(wrong) }
            return .success(value)
        case .string(let choices):
            guard case .string(let s) = value, choices.isEmpty || choices.contains(s) else { return .failure(wrong) }
            return .success(value)
        case .colour:
            guard case .string(let s) = value, let colour = RGBAColour(s) else { return .failure(wrong) }
            return .success(.string(colour.description))
        case .integer:
            guard case .integer(let v) = value, inRange(Double(v)) else { return .failure(wrong) }
            return .success(value)
        case .number:
            guard let v = value.doubleValue, v.isFinite, inRange(v) else { return .failure(wrong) }
            return .success(.number(v))
        }
    }

    private func inRange(_ v: Double) -> Bool {
        if let minimum, minimumIsExclusive ? !(v > minimum) : !(v >= minimum) { return false }
        if let maximum, !(v <= maximum) { return false }
        return true
    }
}

/// Why a filter's arguments were refused.
public enum ParameterProblem: Error, Hashable, Sendable, CustomStringConvertible {
    case unknownParameter(String, filter: String, suggestion: String?)
    case missingParameter(String, filter: String)
    /// A value outside the declaration; `plugin` names the plugin that declared it, if any.
    case invalidValue(parameter: String, expected: String, plugin: String? = nil)

    public var description: String {
        switch self {
        case .unknownParameter(let name, let filter, _): "unknown parameter '\(name)' for filter '\(filter)'"
        case .missingParameter(let name, let filter): "filter '\(filter)' needs parameter '\(name)'"
        case .invalidValue(let parameter, let expected, let plugin):
            "'\(parameter)' must be \(expected)" + (plugin.map { " for plugin '\($0)'" } ?? "")
        }
    }
}

/// Every problem found in one filter's arguments.
public struct ParameterProblems: Error, Hashable, Sendable {
    public let problems: [ParameterProblem]
}

/// What the planner, the worker and `blurfarm filters` know about a filter: its name and
/// parameters. Built-in filters and plugins describe themselves the same way.
public struct FilterDescriptor: Sendable {
    public let name: String
    /// One line: what the filter does.
    public let summary: String
    public let parameters: [ParameterDescriptor]
    /// Where the filter comes from: built into blurfarm, or a plugin's file.
    public let origin: Origin

    /// Where a filter comes from.
    public enum Origin: Hashable, Sendable, CustomStringConvertible {
        /// One of blurfarm's own kernels.
        case builtIn
        /// A plugin: the shared library at `path`, which runs in worker processes only.
        case plugin(path: String)

        public var description: String {
            switch self {
            case .builtIn: "built-in"
            case .plugin(let path): "plugin \(path)"
            }
        }
    }

    /// Whether the filter is a plugin's (it runs in worker processes only).
    public var isPlugin: Bool { origin != .builtIn }

    public init(name: String, summary: String, parameters: [ParameterDescriptor], origin: Origin) {
        self.name = name
        self.summary = summary
        self.parameters = parameters
        self.origin = origin
    }

    /// Checks the given arguments against the declared parameters and fills in defaults.
    /// Every problem is returned, not only the first.
    public func resolve(_ arguments: [(name: String, value: ParameterValue)]) -> Result<FilterSpec, ParameterProblems> {
        var problems: [ParameterProblem] = []
        var resolved: [String: ParameterValue] = [:]
        for (name, value) in arguments {
            guard let parameter = parameters.first(where: { $0.name == name }) else {
                problems.append(.unknownParameter(
                    name, filter: self.name, suggestion: closestName(to: name, among: parameters.map(\.name))))
                continue
            }
            switch parameter.check(value) {
            case .success(let v): resolved[name] = v
            case .failure(.invalidValue(let parameter, let expected, _)) where isPlugin:
                problems.append(.invalidValue(parameter: parameter, expected: expected, plugin: self.name))
            case .failure(let problem): problems.append(problem)
            }
        }
        for parameter in parameters where resolved[parameter.name] == nil {
            if let value = parameter.defaultValue {
                if !problems.contains(where: { if case .invalidValue(parameter.name, _, _) = $0 { true } else { false } }) {
                    resolved[parameter.name] = value
                }
            } else if parameter.isRequired, !arguments.contains(where: { $0.name == parameter.name }) {
                problems.append(.missingParameter(parameter.name, filter: name))
            }
        }
        return problems.isEmpty
            ? .success(FilterSpec(name: name, arguments: resolved)) : .failure(ParameterProblems(problems: problems))
    }
}

/// A filter with all its arguments checked and defaults filled in.
public struct FilterSpec: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    public let arguments: [String: ParameterValue]
    /// Where this filter applies in its chain (the manifest's `regions` and `invert` in the
    /// filter's own parameters): its output blended with its input by the mask. Everywhere
    /// by default. Never ``RegionMask/Extent/box`` or `cutout` (a variant's `output`).
    public var regions: RegionMask

    public init(name: String, arguments: [String: ParameterValue], regions: RegionMask = .everywhere) {
        self.name = name
        self.arguments = arguments
        self.regions = regions
    }

    /// The parameter names a filter's regions take in a manifest, which no filter may have.
    public static let regionKeys = ["regions", "invert"]

    /// The filter and its arguments in a stable order, e.g. `gaussian sigma=8`, then its
    /// regions as a recipe says them (``RegionMask/recipeParts``).
    public var description: String {
        ([name] + arguments.keys.sorted().map { "\($0)=\(arguments[$0]!)" } + regions.recipeParts).joined(separator: " ")
    }
}

/// The candidate nearest to `name` by edit distance, when it is near enough to be a likely typo.
public func closestName(to name: String, among candidates: [String]) -> String? {
    func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, cb) in b.enumerated() {
                current[j + 1] = Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
    let target = Array(name.lowercased())
    let scored = candidates.map { ($0, distance(target, Array($0.lowercased()))) }
    guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
    return best.1 <= Swift.max(2, target.count / 3) ? best.0 : nil
}
