import BlurfarmCore
import BlurfarmManifest

/// Parses `apply`'s `--region x,y,w,h[,r[,feather]]`: a rectangle in output pixels (after
/// `--resize` and the EXIF orientation), each of x, y, w, h a number or a percentage of the
/// image (`10%`), `r` the corner radius and `feather` the ramp inside the edge, in pixels: the
/// manifest's `- rect:` region (docs/manifest.md#regions).
enum RegionOption {
    /// The rectangle `text` describes, or what is wrong with it in words.
    static func parse(_ text: String) -> Result<Region, CommandError> {
        let fields = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        func problem(_ words: String) -> Result<Region, CommandError> {
            .failure(CommandError("--region '\(text)': \(words)"))
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
            lengths.append(isPercent ? .percent(value) : .pixels(value))
        }
        var extras: [Double] = []
        for (name, field) in zip(["corner radius", "feather"], fields.dropFirst(4)) {
            guard let value = Scalar.number(field), value >= 0 else {
                return problem("the \(name) '\(field)' is not a number of pixels >= 0")
            }
            extras.append(value)
        }
        return .success(Region(
            x: lengths[0], y: lengths[1], width: lengths[2], height: lengths[3],
            cornerRadius: extras.first ?? 0, feather: extras.count > 1 ? extras[1] : 0))
    }

    /// The mask of `texts` (every `--region`), inverted with `--invert-regions`, for a chain
    /// of `filters` filters under `edge`; every problem as ``parse(_:)`` says it, and regions
    /// refused as the manifest refuses them.
    static func mask(_ texts: [String], invert: Bool, filters: Int, edge: EdgeRule) -> Result<RegionMask, CommandError> {
        if invert, texts.isEmpty {
            return .failure(CommandError("--invert-regions needs --region"))
        }
        if !texts.isEmpty, filters == 0 {
            return .failure(CommandError("--region says where the filters apply: give one with --filter"))
        }
        if !texts.isEmpty, edge == .grow {
            return .failure(CommandError(
                "--region cannot be used with --edge grow (the output is larger than the image the regions are placed on)"))
        }
        var regions: [Region] = []
        for text in texts {
            switch parse(text) {
            case .success(let region): regions.append(region)
            case .failure(let error): return .failure(error)
            }
        }
        return .success(RegionMask(regions: regions, invert: invert))
    }
}
