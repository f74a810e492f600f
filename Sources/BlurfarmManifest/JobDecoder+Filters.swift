import BlurfarmCore

/// A variant's filter chain, checked against the registry's descriptors.
extension JobDecoder {
    static func decodeFilters(
        _ entry: Node.MapEntry, catalogue: [FilterDescriptor], _ d: inout Decoding
    ) -> [(spec: FilterSpec, location: SourceLocation)]? {
        let expected = "a list of filters, each '- name:' with its parameters below it"
        guard case .list(let items) = entry.value.content else {
            if case .invalid = entry.value.content { return nil }
            d.error("'filters' must be \(expected)", at: entry.value.location)
            return nil
        }
        var chain: [(spec: FilterSpec, location: SourceLocation)] = []
        var ok = true
        for item in items {
            let name: String
            let nameLocation: SourceLocation
            var parameters: [Node.MapEntry] = []
            switch item.content {
            case .scalar(let s):
                name = s.text
                nameLocation = item.location
            case .map(let entries):
                guard let first = entries.first else { continue }
                for extra in entries.dropFirst() {
                    d.error(
                        "a filter item names one filter; write '\(extra.key)' as its own '- \(extra.key):' item",
                        at: extra.keyLocation)
                    ok = false
                }
                name = first.key
                nameLocation = first.keyLocation
                switch first.value.content {
                case .map(let p): parameters = p
                case .invalid: ok = false
                default:
                    d.error(
                        "the parameters of '\(name)' are written below it, one 'name: value' per line",
                        at: first.value.location)
                    ok = false
                }
            case .invalid:
                ok = false
                continue
            case .list:
                d.error("'filters' must be \(expected)", at: item.location)
                ok = false
                continue
            }
            guard let descriptor = catalogue.first(where: { $0.name == name }) else {
                d.error("unknown filter '\(name)'", at: nameLocation)
                if let suggestion = closestName(to: name, among: catalogue.map(\.name)) {
                    d.note("did you mean '\(suggestion)'?", at: nameLocation)
                }
                ok = false
                continue
            }
            // Where this filter applies in the chain: its own `regions` and `invert`.
            let placing = parameters.filter { FilterSpec.regionKeys.contains($0.key) }
            parameters.removeAll { FilterSpec.regionKeys.contains($0.key) }
            var mask = RegionMask.everywhere
            if !placing.isEmpty {
                if let regions = decodeRegions(placing, filterless: false, edge: .clamp, &d) {
                    if regions.file != nil, let e = placing.first(where: { $0.key == "regions" }) {
                        d.error("regions from a file are a variant's, not one filter's: put 'regions' beside 'filters'", at: e.keyLocation)
                        ok = false
                    }
                    mask = regions.mask
                } else {
                    ok = false
                }
            }
            if var spec = resolve(descriptor, parameters, at: nameLocation, &d) {
                spec.regions = mask
                chain.append((spec, nameLocation))
            } else {
                ok = false
            }
        }
        return ok ? chain : nil
    }

    /// Resolves one filter's parameters, placing each ``ParameterProblem`` on the key or
    /// value it concerns.
    static func resolve(
        _ descriptor: FilterDescriptor, _ parameters: [Node.MapEntry], at nameLocation: SourceLocation,
        _ d: inout Decoding
    ) -> FilterSpec? {
        var arguments: [(name: String, value: ParameterValue)] = []
        var unreadable: Set<String> = []
        var ok = true
        for p in parameters {
            switch p.value.content {
            case .scalar(let s):
                let kind = descriptor.parameters.first { $0.name == p.key }?.kind
                arguments.append((p.key, parameterValue(s, kind: kind)))
            case .invalid:
                unreadable.insert(p.key)
                ok = false
            default:
                d.error("'\(p.key)' must be a single value", at: p.value.location)
                unreadable.insert(p.key)
                ok = false
            }
        }
        switch descriptor.resolve(arguments) {
        case .success(let spec):
            return ok ? spec : nil
        case .failure(let problems):
            for problem in problems.problems {
                switch problem {
                case .unknownParameter(let name, let filter, let suggestion):
                    let at = parameters.first { $0.key == name }?.keyLocation ?? nameLocation
                    d.error("unknown key '\(name)' in '\(filter)'", at: at)
                    if let suggestion { d.note("did you mean '\(suggestion)'?", at: at) }
                case .missingParameter(let name, _):
                    if unreadable.contains(name) { continue }
                    d.error(problem.description, at: nameLocation)
                case .invalidValue(let name, _, _):
                    d.error(problem.description, at: parameters.first { $0.key == name }?.value.location ?? nameLocation)
                }
            }
            return nil
        }
    }

    /// A scalar as a filter argument: text for a string parameter; otherwise a plain
    /// `true`/`false`, integer or number when it is one, else text (the descriptor then
    /// says what it expected).
    static func parameterValue(_ s: Scalar, kind: ParameterDescriptor.Kind?) -> ParameterValue {
        if kind?.takesText == true { return .string(s.text) }
        if let b = s.booleanValue { return .boolean(b) }
        if let i = s.integerValue { return .integer(i) }
        if let x = s.numberValue { return .number(x) }
        return .string(s.text)
    }
}
