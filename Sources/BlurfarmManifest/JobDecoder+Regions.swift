import BlurfarmCore

extension JobDecoder {
    /// The keys of a region (`- rect:` or `- ellipse:`), in the order the printer writes them.
    public static let regionKeys = ["x", "y", "width", "height", "corner-radius", "feather"]

    /// A variant's `regions` and `invert`, with where each region's shape is named; nil after
    /// reporting a problem. `filterless`: the variant has no filters (regions would change
    /// nothing); `edge`: regions are placed on an image of the source's size, so not `grow`.
    static func decodeRegions(
        _ entries: [Node.MapEntry], filterless: Bool, edge: EdgeRule, _ d: inout Decoding
    ) -> (mask: RegionMask, locations: [SourceLocation], file: RegionFile?, detection: RegionDetection?)? {
        func entry(_ key: String) -> Node.MapEntry? { entries.first { $0.key == key } }
        var ok = true
        var regions: [Region] = []
        var locations: [SourceLocation] = []
        var file: RegionFile?
        var detection: RegionDetection?
        if let e = entry("regions") {
            let expected = "a list of shapes, each '- rect:' or '- ellipse:' with its keys below it, "
                + "'from:' a file of boxes per input, or 'detect:' a detector (faces)"
            switch e.value.content {
            case .map(let keys) where keys.contains { $0.key == "detect" }:
                detection = decodeRegionDetection(e, &d)
                if detection == nil { ok = false }
            case .map:
                file = decodeRegionFile(e, &d)
                if file == nil { ok = false }
            case .list(let items):
                if items.isEmpty {
                    d.error("'regions' needs at least one shape (leave it out to filter the whole image)", at: e.value.location)
                    ok = false
                }
                for item in items {
                    if let (region, location) = decodeRegion(item, expected: expected, &d) {
                        regions.append(region)
                        locations.append(location)
                    } else {
                        ok = false
                    }
                }
            case .invalid:
                ok = false
            default:
                d.error("'regions' must be \(expected)", at: e.value.location)
                ok = false
            }
            if filterless {
                d.error("'regions' says where the filters apply, and this output has none", at: e.keyLocation)
                ok = false
            }
            if edge == .grow {
                d.error("'regions' cannot be used with edge 'grow' (the output is larger than the image the regions are placed on)", at: e.keyLocation)
                d.note("use edge 'clamp', 'mirror' or 'transparent'", at: e.keyLocation)
                ok = false
            }
        }
        var invert = false
        if let e = entry("invert") {
            if let v = d.boolean(e) {
                invert = v
                if v, entry("regions") == nil {
                    d.error("'invert' needs 'regions' (it filters everywhere but them)", at: e.value.location)
                    ok = false
                }
            } else {
                ok = false
            }
        }
        return ok ? (RegionMask(regions: regions, invert: invert), locations, file, detection) : nil
    }

    /// `regions: {detect: …, threshold: …, grow: …, shape: …, feather: …}`: the boxes a
    /// detector finds in each input (``RegionDetection``).
    static func decodeRegionDetection(_ e: Node.MapEntry, _ d: inout Decoding) -> RegionDetection? {
        guard let entries = d.mapEntries(e.value, key: "regions", expected: "a map of " + RegionDetection.keys.joined(separator: ", "))
        else { return nil }
        if let from = entries.first(where: { $0.key == "from" }) {
            d.error("'regions' takes its boxes from a file ('from') or a detector ('detect'), not both", at: from.keyLocation)
            return nil
        }
        d.reportUnknownKeys(entries, known: RegionDetection.keys, context: "regions")
        func value(_ key: String) -> Node.MapEntry? { entries.first { $0.key == key } }
        var ok = entries.allSatisfy { RegionDetection.keys.contains($0.key) }
        var detection = RegionDetection(detector: "")
        if let e = value("detect") {
            if let name = d.string(e, expected: "a detector's name, such as faces") {
                // A plugin's name (lib<name>.so): never a path.
                if !name.isEmpty, name.utf8.first.map({ (97...122).contains($0) }) == true,
                    name.utf8.allSatisfy({ (97...122).contains($0) || (48...57).contains($0) || $0 == 45 })
                {
                    detection.detector = name
                } else {
                    d.error("'detect' must be a detector's name: lower-case letters, digits and '-' (such as faces)", at: e.value.location)
                    ok = false
                }
            } else {
                ok = false
            }
        }
        /// A plain finite number that `accepts`, or nil after an error saying `expected`.
        func number(_ e: Node.MapEntry, _ expected: String, _ accepts: (Double) -> Bool) -> Double? {
            if case .invalid = e.value.content { return nil }
            guard case .scalar(let s) = e.value.content, let v = s.numberValue, v.isFinite, accepts(v) else {
                d.error("'\(e.key)' must be \(expected)", at: e.value.location)
                return nil
            }
            return v
        }
        if let e = value("threshold") {
            if let v = number(e, "a score > 0 and <= 1", { $0 > 0 && $0 <= 1 }) { detection.threshold = v } else { ok = false }
        }
        if let e = value("grow") {
            let largest = RegionDetection.largestGrow
            if let v = number(e, "a number from 1 to \(Int(largest))", { $0 >= 1 && $0 <= largest }) {
                detection.grow = v
            } else {
                ok = false
            }
        }
        if let e = value("shape") {
            if let v = d.choice(e, of: Region.Shape.self) { detection.shape = v } else { ok = false }
        }
        if let e = value("feather") {
            if let v = pixels(e, &d) { detection.feather = v } else { ok = false }
        }
        return ok ? detection : nil
    }

    /// `regions: {from: …, shape: …, feather: …, missing: …}`: a file of boxes per input
    /// (``RegionFile``).
    static func decodeRegionFile(_ e: Node.MapEntry, _ d: inout Decoding) -> RegionFile? {
        guard let entries = d.mapEntries(e.value, key: "regions", expected: "a map of " + RegionFile.keys.joined(separator: ", "))
        else { return nil }
        d.reportUnknownKeys(entries, known: RegionFile.keys, context: "regions")
        func value(_ key: String) -> Node.MapEntry? { entries.first { $0.key == key } }
        var ok = entries.allSatisfy { RegionFile.keys.contains($0.key) }
        var template: PathTemplate?
        if let from = d.require("from", in: entries, map: e.value, context: "regions") {
            if let text = d.string(from, expected: "a path such as {stem}.regions.json, beside each input") {
                do {
                    let parsed = try PathTemplate(text)
                    if text.hasPrefix("/") || text.split(separator: "/").contains("..") {
                        d.error("the regions' file is beside its input or below its folder: not absolute, no '..'", at: from.value.location)
                        ok = false
                    } else if parsed.uses(.relpath) || parsed.uses(.size) {
                        d.error(
                            "the regions' file is relative to its input's folder: '{relpath}' and '{size}' have no place in it",
                            at: from.value.location)
                        ok = false
                    } else if !parsed.uses(.stem), !parsed.uses(.name) {
                        d.error("the regions' file needs '{stem}' or '{name}', or every input reads the same file", at: from.value.location)
                        ok = false
                    } else {
                        template = parsed
                    }
                } catch {
                    d.error(error.message, at: from.value.location(ofScalarAt: error.offset))
                    ok = false
                }
            } else {
                ok = false
            }
        }
        var shape = Region.Shape.rect, feather = 0.0, missing = RegionFile.Missing.error
        if let e = value("shape") {
            if let v = d.choice(e, of: Region.Shape.self) { shape = v } else { ok = false }
        }
        if let e = value("feather") {
            if let v = pixels(e, &d) { feather = v } else { ok = false }
        }
        if let e = value("missing") {
            if let v = d.choice(e, of: RegionFile.Missing.self) { missing = v } else { ok = false }
        }
        guard ok, let template else { return nil }
        return RegionFile(path: template, shape: shape, feather: feather, missing: missing)
    }

    /// One `- rect:` or `- ellipse:` item with its keys.
    static func decodeRegion(_ item: Node, expected: String, _ d: inout Decoding) -> (Region, SourceLocation)? {
        guard case .map(let outer) = item.content, let first = outer.first else {
            if case .invalid = item.content { return nil }
            d.error("'regions' must be \(expected)", at: item.location)
            return nil
        }
        var ok = true
        for extra in outer.dropFirst() {
            d.error("a region item names one shape; write '\(extra.key)' below '\(first.key)', indented", at: extra.keyLocation)
            ok = false
        }
        let shapes = Region.Shape.allCases.map(\.rawValue)
        guard let shape = Region.Shape(rawValue: first.key) else {
            d.error("unknown shape '\(first.key)': a region is 'rect' or 'ellipse'", at: first.keyLocation)
            if let suggestion = closestName(to: first.key, among: shapes) {
                d.note("did you mean '\(suggestion)'?", at: first.keyLocation)
            }
            return nil
        }
        guard let entries = d.mapEntries(
            first.value, key: first.key, expected: "a map of 'x', 'y', 'width', 'height' and 'feather' below it")
        else { return nil }
        d.reportUnknownKeys(entries, known: regionKeys, context: first.key)
        func value(_ key: String) -> Node.MapEntry? { entries.first { $0.key == key } }
        var lengths: [String: RegionLength] = [:]
        for key in ["x", "y", "width", "height"] {
            guard let e = d.require(key, in: entries, map: first.value, context: first.key) else {
                ok = false
                continue
            }
            if let length = regionLength(e, positive: key == "width" || key == "height", &d) {
                lengths[key] = length
            } else {
                ok = false
            }
        }
        var cornerRadius = 0.0
        if let e = value("corner-radius") {
            if shape != .rect {
                d.error("'corner-radius' applies to 'rect' only", at: e.keyLocation)
                ok = false
            } else if let r = pixels(e, &d) {
                cornerRadius = r
            } else {
                ok = false
            }
        }
        var feather = 0.0
        if let e = value("feather") {
            if let f = pixels(e, &d) { feather = f } else { ok = false }
        }
        guard ok, let x = lengths["x"], let y = lengths["y"], let width = lengths["width"], let height = lengths["height"]
        else { return nil }
        let region = Region(
            shape: shape, x: x, y: y, width: width, height: height, cornerRadius: cornerRadius, feather: feather)
        return (region, first.keyLocation)
    }

    /// A region's coordinate: pixels (`120`, `-8.5`) or a percentage of the image (`10%`);
    /// `positive` for a width or height (> 0).
    static func regionLength(_ e: Node.MapEntry, positive: Bool, _ d: inout Decoding) -> RegionLength? {
        let expected = positive
            ? "a size > 0 in pixels (120) or in percent of the image (25%)"
            : "a position in pixels (120) or in percent of the image (10%)"
        guard case .scalar(let s) = e.value.content else {
            if case .invalid = e.value.content { return nil }
            d.error("'\(e.key)' must be \(expected)", at: e.value.location)
            return nil
        }
        // The number is read as every number of a manifest is, with or without a '%' after it.
        let isPercent = s.style == .plain && s.text.hasSuffix("%")
        guard let value = isPercent ? Scalar.number(String(s.text.dropLast())) : s.numberValue, !positive || value > 0 else {
            d.error("'\(e.key)' must be \(expected)", at: e.value.location)
            return nil
        }
        let length: RegionLength = isPercent ? .percent(value) : .pixels(value)
        if let problem = length.placementProblem {
            d.error("'\(e.key)': \(problem)", at: e.value.location)
            return nil
        }
        return length
    }

    /// A length in pixels >= 0 (`corner-radius`, `feather`).
    static func pixels(_ e: Node.MapEntry, _ d: inout Decoding) -> Double? {
        let expected = "a number of pixels >= 0"
        guard case .scalar(let s) = e.value.content else {
            if case .invalid = e.value.content { return nil }
            d.error("'\(e.key)' must be \(expected)", at: e.value.location)
            return nil
        }
        guard let value = s.numberValue, value.isFinite, value >= 0 else {
            d.error("'\(e.key)' must be \(expected)", at: e.value.location)
            if s.text.hasSuffix("%") { d.note("'\(e.key)' is in pixels, not percent", at: e.value.location) }
            return nil
        }
        if let problem = RegionLength.pixelsProblem(value) {
            d.error("'\(e.key)': \(problem)", at: e.value.location)
            return nil
        }
        return value
    }
}
