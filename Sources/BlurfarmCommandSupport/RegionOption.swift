import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmManifest
import BlurfarmKernels
import BlurfarmSystem

/// Parses `apply`'s `--region x,y,w,h[,r[,feather]]`: a rectangle in output pixels (after
/// `--resize` and the EXIF orientation), each of x, y, w, h a number or a percentage of the
/// image (`10%`), `r` the corner radius and `feather` the ramp inside the edge, in pixels: the
/// manifest's `- rect:` region (docs/manifest.md#regions).
public enum RegionOption {
    /// The rectangle `text` describes, or what is wrong with it in words.
    public static func parse(_ text: String) -> Result<Region, OptionError> {
        let fields = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        func problem(_ words: String) -> Result<Region, OptionError> {
            .failure(OptionError("--region '\(text)': \(words)"))
        }
        guard (4...6).contains(fields.count) else {
            return problem("expected x,y,width,height with an optional corner radius and feather, e.g. 10%,70%,80%,20%,24")
        }
        var lengths: [RegionLength] = []
        for (index, (name, field)) in zip(["x", "y", "width", "height"], fields).enumerated() {
            let isPercent = field.hasSuffix("%")
            // Read as the manifest reads a region's numbers.
            guard let value = Scalar.number(isPercent ? String(field.dropLast()) : field) else {
                return problem("\(name) '\(field)' is not a number of pixels or a percentage")
            }
            if index >= 2, value <= 0 { return problem("\(name) must be > 0") }
            let length: RegionLength = isPercent ? .percent(value) : .pixels(value)
            if let words = length.placementProblem { return problem("\(name): \(words)") }
            lengths.append(length)
        }
        var extras: [Double] = []
        for (name, field) in zip(["corner radius", "feather"], fields.dropFirst(4)) {
            guard let value = Scalar.number(field), value >= 0 else {
                return problem("the \(name) '\(field)' is not a number of pixels >= 0")
            }
            if let words = RegionLength.pixelsProblem(value) { return problem("the \(name): \(words)") }
            extras.append(value)
        }
        return .success(Region(
            x: lengths[0], y: lengths[1], width: lengths[2], height: lengths[3],
            cornerRadius: extras.first ?? 0, feather: extras.count > 1 ? extras[1] : 0))
    }

    /// The mask of `texts` (every `--region`), inverted with `--invert-regions`, for a chain
    /// of `filters` filters under `edge`; every problem as ``parse(_:)`` says it, and regions
    /// refused as the manifest refuses them.
    public static func mask(
        _ texts: [String], file: [Region]? = nil, invert: Bool, filters: Int, edge: EdgeRule
    ) -> Result<RegionMask, OptionError> {
        let given = !texts.isEmpty || file != nil
        if invert, !given {
            return .failure(OptionError("--invert-regions needs --region or --regions"))
        }
        if given, filters == 0 {
            return .failure(OptionError("--region says where the filters apply: give one with --filter"))
        }
        if given, edge == .grow {
            return .failure(OptionError(
                "\(texts.isEmpty ? "--regions" : "--region") cannot be used with --edge grow "
                    + "(the output is larger than the image the regions are placed on)"))
        }
        var regions: [Region] = file ?? []
        for text in texts {
            switch parse(text) {
            case .success(let region): regions.append(region)
            case .failure(let error): return .failure(error)
            }
        }
        return .success(RegionMask(regions: regions, invert: invert))
    }

    /// The boxes of the region file at `path` (a detector's JSON, read as a manifest's region
    /// files are: ``JobPlanner/readRegionFile(_:)``), as `shape` with `feather`; what is
    /// wrong with the file, naming it and the JSON path.
    public static func boxes(
        _ path: String, shape: Region.Shape, feather: Double, displayed: RegionFile.DisplayedImage? = nil
    ) -> Result<[Region], OptionError> {
        let shown = "--regions '\(ShownName.of(path))'"
        switch JobPlanner.readRegionFile(path) {
        case .missing: return .failure(OptionError("\(shown): no such file"))
        case .unreadable(let reason): return .failure(OptionError("\(shown): \(reason)"))
        case .read(let bytes):
            do {
                return .success(try RegionFile.regions(from: bytes, shape: shape, feather: feather, displayed: displayed))
            } catch {
                return .failure(OptionError("\(shown): \(error)"))
            }
        }
    }

    /// The filters (each `--filter`) and where they apply (each `--region`, the `--regions`
    /// file's boxes as `shape` with `feather`, everywhere but them with `invert`, only their box
    /// with `regionOnly`): what `apply`'s one image and `-o`'s many take alike. A `--regions`
    /// file without boxes filters nothing (inverted: everything); with `displayed` (one image),
    /// the file's size is checked against the image's as shown.
    public static func chain(
        filters: [String], regions: [String], file regionFile: String?, shape: Region.Shape, feather: Double,
        invert: Bool, regionOnly: Bool, edge: EdgeRule, registry: FilterRegistry, displayed: RegionFile.DisplayedImage? = nil
    ) throws(OptionError) -> ([FilterSpec], RegionMask) {
        var specs: [FilterSpec] = []
        for filter in filters { specs.append(try FilterOption.parse(filter, registry: registry).get()) }
        let file = try regionFile.map { path throws(OptionError) in
            try boxes(path, shape: shape, feather: feather, displayed: displayed).get()
        }
        var mask = try mask(regions, file: file, invert: invert, filters: specs.count, edge: edge).get()
        if regionOnly {
            guard !mask.isEverywhere, !invert else {
                throw OptionError(
                    invert ? "--region-only writes the regions' box: not with --invert-regions"
                        : "--region-only writes the regions' box: give --region or --regions (with boxes)")
            }
            mask.extent = .box
        }
        if let file, file.isEmpty, regions.isEmpty { return (invert ? specs : [], .everywhere) }
        return (specs, mask)
    }
}
