import BlurfarmCore

/// Reads a manifest into a checked ``JobSpec``, or every problem in it.
///
/// Filters are checked against the catalogue the caller passes (built-in filters and
/// loaded plugins alike), through ``FilterDescriptor/resolve(_:)``; nothing here knows a
/// filter by name.
public enum JobDecoder {
    /// The keys of a job, in the order the printer writes them.
    public static let jobKeys = ["job", "inputs", "exclude", "outputs", "tile", "verify", "map"]
    /// The keys of one output variant, in the order the printer writes them.
    public static let variantKeys = [
        "name", "path", "formats", "filters", "edge", "colour", "quality", "lossless", "progressive", "subsampling",
        "optimize-coding", "effort", "metadata", "strip", "jpeg", "webp", "avif", "resize", "background",
        "regions", "invert", "output",
    ]
    /// The keys of `resize`.
    public static let resizeKeys = ["width", "height", "sizes", "fit", "crop", "upscale", "sharpen"]

    /// Decodes a manifest's bytes read from `file` (the path as messages should show it).
    /// On failure, the diagnostics hold at least one error, ordered by location.
    public static func decode(_ bytes: [UInt8], file: String, filters: [FilterDescriptor]) -> Result<JobSpec, Diagnostics> {
        let (root, parsed) = ManifestParser.parse(bytes, file: file)
        var decoding = Decoding()
        var job: JobSpec?
        if let root {
            job = decodeJob(root, filters: filters, &decoding)
        } else if !parsed.hasErrors {
            decoding.error("empty manifest: expected 'job:'", at: SourceLocation(file: file, line: 1, column: 1))
        }
        var all = parsed
        all.append(contentsOf: decoding.diagnostics)
        all = all.sortedByLocation()
        if let job, !all.hasErrors { return .success(job) }
        if !all.hasErrors {
            all.append(.error("manifest could not be read", at: SourceLocation(file: file, line: 1, column: 1)))
        }
        return .failure(all)
    }

    /// Decodes manifest text as if read from `file`.
    public static func decode(_ text: String, file: String, filters: [FilterDescriptor]) -> Result<JobSpec, Diagnostics> {
        decode(Array(text.utf8), file: file, filters: filters)
    }

    /// Reads the manifest at `path` and decodes it; a file that cannot be read is one error.
    public static func decode(fileAtPath path: String, filters: [FilterDescriptor]) -> Result<JobSpec, Diagnostics> {
        switch SourceFile.readBytes(atPath: path) {
        case .success(let bytes): decode(bytes, file: path, filters: filters)
        case .failure(let diagnostics): .failure(diagnostics)
        }
    }

    // MARK: The job

    static func decodeJob(_ root: Node, filters catalogue: [FilterDescriptor], _ d: inout Decoding) -> JobSpec? {
        guard case .map(let entries) = root.content else {
            if case .invalid = root.content { return nil }
            d.error("a manifest is a map of 'key: value' lines, starting with 'job:'", at: root.location)
            return nil
        }
        d.reportUnknownKeys(entries, known: jobKeys, context: nil)
        func entry(_ key: String) -> Node.MapEntry? { entries.first { $0.key == key } }
        var ok = true

        var name: String?
        var nameLocation: SourceLocation?
        if let e = d.require("job", in: entries, map: root, context: nil) {
            name = d.name(e)
            nameLocation = e.value.location
        }
        if name == nil { ok = false }

        var inputs: [(text: String, node: Node)] = []
        if let e = d.require("inputs", in: entries, map: root, context: nil) {
            if let globs = globs(e, d: &d) {
                inputs = globs
                if globs.isEmpty {
                    d.error("'inputs' needs at least one glob", at: e.value.location)
                    ok = false
                }
            } else {
                ok = false
            }
        } else {
            ok = false
        }

        var exclude: [(text: String, node: Node)] = []
        if let e = entry("exclude") {
            if let globs = globs(e, d: &d) { exclude = globs } else { ok = false }
        }

        var outputs: [VariantSpec] = []
        if let e = d.require("outputs", in: entries, map: root, context: nil) {
            switch e.value.content {
            case .list(let items):
                if items.isEmpty {
                    d.error("'outputs' needs at least one output", at: e.value.location)
                    ok = false
                }
                for item in items {
                    if let variant = decodeVariant(item, filters: catalogue, &d) {
                        outputs.append(variant)
                    } else {
                        ok = false
                    }
                }
                checkDistinct(outputs, &d)
            case .invalid:
                ok = false
            default:
                d.error("'outputs' must be a list of '- name:' items", at: e.value.location)
                ok = false
            }
        } else {
            ok = false
        }

        var tile: Int?
        if let e = entry("tile") {
            tile = d.integer(e, in: 0...RenderSchedule.largestTileSize)
            if tile == nil { ok = false }
        }
        var verify = VerifyMode.checksum
        if let e = entry("verify") {
            if let v = d.choice(e, of: VerifyMode.self) { verify = v } else { ok = false }
        }

        let map = entry("map").map { mapPath($0, &d) }
        if case .some(nil) = map { ok = false }

        guard ok, let name else { return nil }
        var job = JobSpec(
            name: name, inputs: inputs.map(\.text), exclude: exclude.map(\.text), outputs: outputs, tile: tile,
            verify: verify, nameLocation: nameLocation, inputLocations: inputs.map(\.node.location),
            excludeLocations: exclude.map(\.node.location))
        job.map = map ?? nil
        job.mapLocation = entry("map")?.value.location
        return job
    }

    /// A list of globs, each checked by ``GlobPattern``.
    static func globs(_ entry: Node.MapEntry, d: inout Decoding) -> [(text: String, node: Node)]? {
        guard let items = d.scalarList(entry, expected: "a list of globs, such as [photos/*.jpg]") else { return nil }
        var ok = true
        for item in items {
            do {
                _ = try GlobPattern(item.text)
            } catch {
                d.error("invalid glob: \(error.message)", at: item.node.location(ofScalarAt: error.offset))
                if error.message.contains("'{'") || error.message.contains("'}'") {
                    // `[*.{jpg,JPG}]` is two items: the comma ends the first.
                    d.note(
                        "a ',' ends an item of an inline list: quote a glob with alternatives, as in "
                            + "['photos/*.{jpg,JPG}'], or write it in a '- ' list",
                        at: item.node.location)
                }
                ok = false
            }
        }
        return ok ? items : nil
    }

    /// Two variants may not share a name or write the same path.
    static func checkDistinct(_ outputs: [VariantSpec], _ d: inout Decoding) {
        var names: [String: VariantSpec] = [:]
        var paths: [String: VariantSpec] = [:]
        for variant in outputs {
            if let first = names[variant.name] {
                if let here = variant.location {
                    d.error("two outputs are named '\(variant.name)'", at: here)
                    if let there = first.location { d.note("'\(variant.name)' first named here", at: there) }
                }
            } else {
                names[variant.name] = variant
            }
            if let first = paths[variant.pathTemplate.text] {
                if let here = variant.pathLocation {
                    d.error("outputs '\(first.name)' and '\(variant.name)' write the same path", at: here)
                    if let there = first.pathLocation { d.note("'\(first.name)' writes it here", at: there) }
                }
            } else {
                paths[variant.pathTemplate.text] = variant
            }
        }
    }

    // MARK: Variants

    static func decodeVariant(_ item: Node, filters catalogue: [FilterDescriptor], _ d: inout Decoding) -> VariantSpec? {
        guard let entries = d.mapEntries(item, key: "outputs", expected: "a list of '- name:' items") else { return nil }
        let context = "outputs"
        d.reportUnknownKeys(entries, known: variantKeys, context: context)
        func entry(_ key: String) -> Node.MapEntry? { entries.first { $0.key == key } }
        var ok = true

        var name: String?
        if let e = d.require("name", in: entries, map: item, context: context) { name = d.name(e) }
        if name == nil { ok = false }

        var formats: [String] = []
        if let e = entry("formats") {
            if let v = decodeFormats(e, &d) { formats = v } else { ok = false }
        }
        var template: PathTemplate?
        var pathEntry: Node.MapEntry?
        if let e = d.require("path", in: entries, map: item, context: context) {
            pathEntry = e
            template = pathTemplate(e, formats: entry("formats") != nil, &d)
        }
        if template == nil { ok = false }

        var filters: [FilterSpec] = []
        var filterLocations: [SourceLocation] = []
        if let e = entry("filters") {
            if let chain = decodeFilters(e, catalogue: catalogue, &d) {
                filters = chain.map(\.spec)
                filterLocations = chain.map(\.location)
            } else {
                ok = false
            }
        }

        var edge = EdgeRule.clamp
        if let e = entry("edge") {
            if let v = d.choice(e, of: EdgeRule.self) { edge = v } else { ok = false }
        }
        if edge == .grow, let e = entry("edge") {
            for (filter, location) in zip(filters, filterLocations) where !filter.regions.isEverywhere {
                d.error(
                    "filter '\(filter.name)' has regions, which cannot be used with edge 'grow' (the output is larger "
                        + "than the image the regions are placed on)", at: location)
                d.note("the edge is set here", at: e.value.location)
                ok = false
            }
        }
        var colour = ColourMode.gamma
        if let e = entry("colour") {
            if let v = d.choice(e, of: ColourMode.self) { colour = v } else { ok = false }
        }
        var quality = VariantSpec.defaultQuality
        if let e = entry("quality") {
            if let v = d.integer(e, in: 1...100) { quality = v } else { ok = false }
        }
        /// The formats the variant writes: its `formats`, else its path's (none when the path
        /// is not known).
        let written: [ImageFormat] = (formats.isEmpty ? [template?.fixedExtension].compactMap { $0 } : formats)
            .compactMap { ImageFormat(extension: $0) }
        /// Refuses `option` set on an entry for a path whose format does not have it, or for
        /// `formats` none of which has it (those that do take it, the others leave it).
        func checkFormat(_ option: FormatOption, _ e: Node.MapEntry) {
            if !formats.isEmpty {
                guard !written.contains(where: option.formats.contains) else { return }
                d.error(
                    "'\(option.rawValue)' applies to \(option.formatNames) outputs only, and 'formats' has none",
                    at: e.value.location)
                ok = false
            } else if let ext = template?.fixedExtension, let problem = ImageFormat.problem(with: option, extension: ext) {
                d.error(problem, at: e.value.location)
                ok = false
            }
        }
        /// Refuses an `effort` beyond what one of `formats` takes (WebP 0–6, AVIF 0–9).
        func checkEffort(_ effort: Int, _ e: Node.MapEntry, formats: [ImageFormat]) {
            for format in formats {
                guard let maximum = format.maximumEffort, effort > maximum else { continue }
                d.error("\(format.name)'s effort is 0 to \(maximum), not \(effort)", at: e.value.location)
                ok = false
            }
        }
        /// A `true`/`false` key for a setting only one format has (false when absent).
        func formatFlag(_ option: FormatOption) -> Bool {
            guard let e = entry(option.rawValue) else { return false }
            guard let v = d.boolean(e) else {
                ok = false
                return false
            }
            if v { checkFormat(option, e) }
            return v
        }
        let lossless = formatFlag(.lossless)
        let progressive = formatFlag(.progressive)
        var subsampling = ChromaSubsampling.auto
        if let e = entry("subsampling") {
            if let v = d.choice(e, of: ChromaSubsampling.self) {
                subsampling = v
                if v != .auto { checkFormat(.subsampling, e) }
            } else {
                ok = false
            }
        }
        let optimizeCoding = formatFlag(.optimizeCoding)
        var effort: Int?
        if let e = entry("effort") {
            if let v = d.integer(e, in: 0...9) {
                effort = v
                checkFormat(.effort, e)
            } else {
                ok = false
            }
        }
        var metadata = MetadataPolicy.keepICC
        if let e = entry("metadata") {
            if let v = d.choice(e, of: MetadataPolicy.self) { metadata = v } else { ok = false }
        }
        // `strip:` as manifests wrote it before `metadata:`: true kept the ICC profile alone.
        if let e = entry("strip") {
            if entry("metadata") != nil {
                d.error("'strip' and 'metadata' both say which metadata is kept: keep 'metadata'", at: e.keyLocation)
                ok = false
            } else if let v = d.boolean(e) {
                metadata = v ? .keepICC : .keep
            } else {
                ok = false
            }
        }
        var formatSettings: [ImageFormat: VariantSpec.FormatSettings] = [:]
        for (key, format) in VariantSpec.formatBlocks {
            guard let e = entry(key) else { continue }
            guard written.isEmpty || written.contains(format) else {
                d.error("'\(key)' sets \(format.name) outputs, and this variant writes none", at: e.keyLocation)
                ok = false
                continue
            }
            if let block = decodeFormatBlock(e, format: format, &d) {
                formatSettings[format] = block
            } else {
                ok = false
            }
        }
        // The variant's effort, for the formats whose block does not set their own.
        if let effort, let e = entry("effort") {
            checkEffort(effort, e, formats: written.filter { formatSettings[$0]?.effort == nil })
        }
        var resize: ResizeSpec?
        if let e = entry("resize") {
            resize = decodeResize(e, &d)
            if resize == nil { ok = false }
        }
        // `{size}` and `sizes` go together.
        if let template, let pathEntry, template.uses(.size), resize?.sizes.isEmpty ?? true, ok {
            d.error("'{size}' in the path needs 'sizes' in 'resize'", at: pathEntry.value.location)
            ok = false
        }
        if let template, let resize, !resize.sizes.isEmpty, !template.uses(.size) {
            d.error(
                "'sizes' needs '{size}' in the path, or every size writes the same file",
                at: entry("resize")!.value.location)
            ok = false
        }
        var background = RGBAColour.white
        if let e = entry("background") {
            let expected = "a colour written '#rrggbb'"
            if let text = d.string(e, expected: expected) {
                // Opaque only: a format without alpha is flattened onto it.
                if text.utf8.count == 7, let colour = RGBAColour(text) {
                    background = colour
                } else {
                    d.error("'background' must be \(expected)", at: e.value.location)
                    ok = false
                }
            } else {
                ok = false
            }
        }

        let filterless = entry("filters").map { if case .list(let items) = $0.value.content { items.isEmpty } else { false } } ?? true
        let regions = decodeRegions(entries, filterless: filterless, edge: edge, &d)
        if regions == nil { ok = false }
        // A file's boxes are measured on the whole image: a crop not known before the image
        // (`cover`, smart or not) would put them elsewhere.
        if regions?.file != nil || regions?.detection != nil, resize?.fit == .cover, let e = entry("regions") {
            let which = regions?.file != nil ? "regions from a file" : "detected regions"
            d.error("\(which) are placed on the whole image: not with fit 'cover', whose crop moves them", at: e.keyLocation)
            ok = false
        }

        var mask = regions?.mask
        if let e = entry("output"), let text = d.string(e, expected: "'image' or 'region'") {
            switch text {
            case "image": break
            case "region":
                if let why = regions.flatMap({ regions in
                    regions.file != nil ? "regions from a file (any number of boxes per input)"
                        : regions.detection != nil ? "detected regions (any number of boxes per input)"
                        : regions.mask.isEverywhere ? "no 'regions'"
                        : regions.mask.invert ? "'invert' (everything but the regions has no box)"
                        : !(resize?.sizes.isEmpty ?? true) ? "'sizes' (the widths would not be the sizes)" : nil
                }) {
                    d.error("'output: region' writes the box of the variant's regions, and this variant has \(why)", at: e.value.location)
                    ok = false
                }
                mask?.extent = .box
            default:
                d.error("'output' must be 'image' (the whole image, the default) or 'region' (only the regions' box)", at: e.value.location)
                ok = false
            }
        } else if entry("output") != nil {
            ok = false
        }

        guard ok, let name, let template, let regions, let mask else { return nil }
        return VariantSpec(
            name: name, pathTemplate: template, formats: formats, filters: filters, edge: edge, colour: colour, quality: quality,
            lossless: lossless, progressive: progressive, subsampling: subsampling, metadata: metadata, effort: effort,
            optimizeCoding: optimizeCoding, formatSettings: formatSettings, resize: resize, background: background,
            regions: mask, regionFile: regions.file, detection: regions.detection, location: item.location,
            pathLocation: pathEntry?.value.location, filterLocations: filterLocations, regionLocations: regions.locations)
    }
}
