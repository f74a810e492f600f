import BlurfarmCore

/// One output a job writes for every input: where to, through which filters, in what form.
///
/// Two variants are equal when they say the same thing: the `…Location` properties record
/// where the variant was written and take no part in `==` or hashing.
public struct VariantSpec: Hashable, Sendable {
    /// The variant's name: letters, digits, `-`, `_` and `.`; unique in its job.
    public var name: String
    /// Where each output goes, relative to the manifest's folder.
    public var pathTemplate: PathTemplate
    /// The formats written, as extensions (lower case, as the manifest spells them: `jpg` or
    /// `jpeg`), one output each from one decode and one filter pass, `{ext}` in the path
    /// standing for each; empty: one output, in the format of the path's extension.
    public var formats: [String]
    /// The filter chain, applied in order; empty for a plain resize or re-encode.
    public var filters: [FilterSpec]
    /// What the filters see beyond the image's edges (default `clamp`).
    public var edge: EdgeRule
    /// Which values the filters average (default `gamma`).
    public var colour: ColourMode
    /// Encoder quality for lossy formats (JPEG, lossy WebP), 1–100 (default 90).
    public var quality: Int
    /// Whether a WebP output is lossless (default false; WebP only).
    public var lossless: Bool
    /// Whether a JPEG output is progressive (default false; JPEG only).
    public var progressive: Bool
    /// A JPEG output's chroma subsampling (default `auto`; JPEG only).
    public var subsampling: ChromaSubsampling
    /// Which of the input's metadata the output carries (default `keep-icc`: the ICC profile
    /// alone).
    public var metadata: MetadataPolicy
    /// WebP's and AVIF's encoder effort, nil for libvips's default (WebP and AVIF only).
    public var effort: Int?
    /// JPEG's optimized Huffman coding (default false; JPEG only).
    public var optimizeCoding: Bool
    /// Settings for one format only (`jpeg:`, `webp:`, `avif:` blocks), over the variant's.
    public var formatSettings: [ImageFormat: FormatSettings]
    /// How the output is scaled, `nil` to keep the input's size.
    public var resize: ResizeSpec?
    /// The colour transparent pixels are flattened onto for formats without alpha (JPEG);
    /// default white.
    public var background: RGBAColour
    /// Where the filters apply (`regions` and `invert`); everywhere by default.
    public var regions: RegionMask
    /// Regions read per input from a file beside it (`regions: {from: …}`), nil for none: the
    /// plan reads each input's and gives its outputs ``regions`` (keeping `invert`).
    public var regionFile: RegionFile?
    /// Regions a detector finds in each input (`regions: {detect: …}`), nil for none: the run
    /// gives the outputs it makes their ``regions`` (keeping `invert`) from the boxes.
    public var detection: RegionDetection?

    /// Where the variant's item starts (its first key), when it came from a file.
    public var location: SourceLocation?
    /// Where the `path` value starts.
    public var pathLocation: SourceLocation?
    /// Where each filter's name stands, parallel to `filters` (empty when not from a file).
    public var filterLocations: [SourceLocation]
    /// Where each region's shape is named, parallel to `regions.regions`.
    public var regionLocations: [SourceLocation]

    /// A variant; every argument but the name and path has the manifest's default.
    public init(
        name: String, pathTemplate: PathTemplate, formats: [String] = [], filters: [FilterSpec] = [], edge: EdgeRule = .clamp,
        colour: ColourMode = .gamma, quality: Int = VariantSpec.defaultQuality, lossless: Bool = false,
        progressive: Bool = false, subsampling: ChromaSubsampling = .auto, metadata: MetadataPolicy = .keepICC,
        effort: Int? = nil, optimizeCoding: Bool = false, formatSettings: [ImageFormat: FormatSettings] = [:],
        resize: ResizeSpec? = nil, background: RGBAColour = .white,
        regions: RegionMask = .everywhere, regionFile: RegionFile? = nil, detection: RegionDetection? = nil,
        location: SourceLocation? = nil, pathLocation: SourceLocation? = nil, filterLocations: [SourceLocation] = [],
        regionLocations: [SourceLocation] = []
    ) {
        self.name = name
        self.pathTemplate = pathTemplate
        self.formats = formats
        self.filters = filters
        self.edge = edge
        self.colour = colour
        self.quality = quality
        self.lossless = lossless
        self.progressive = progressive
        self.subsampling = subsampling
        self.metadata = metadata
        self.effort = effort
        self.optimizeCoding = optimizeCoding
        self.formatSettings = formatSettings
        self.resize = resize
        self.background = background
        self.regions = regions
        self.regionFile = regionFile
        self.detection = detection
        self.location = location
        self.pathLocation = pathLocation
        self.filterLocations = filterLocations
        self.regionLocations = regionLocations
    }

    /// The encoder quality when none is given.
    public static let defaultQuality = 90

    /// One variant per output size: for a resize with `sizes`, this variant resized to each
    /// width in turn (its `sizes` emptied), with the width and the largest of them; otherwise
    /// the variant itself, with nil for both. Without `upscale`, the widths larger than
    /// `sourceWidth` (the input's width as displayed, when known) are left out
    /// (``sizesLarger(than:)``): their files would be narrower than their names say, so they
    /// are not made, and the largest is the largest made.
    public func eachSize(sourceWidth: Int? = nil) -> [(size: Int?, largest: Int?, variant: VariantSpec)] {
        guard let resize, !resize.sizes.isEmpty else { return [(nil, nil, self)] }
        let larger = sourceWidth.map(sizesLarger(than:)) ?? []
        let made = resize.sizes.filter { !larger.contains($0) }
        return made.map { size in (size, made.last, sized(size)) }
    }

    /// Of the widths of `sizes`, those an input `sourceWidth` pixels wide would have to be
    /// enlarged for, and which are therefore not made; none with `upscale`.
    public func sizesLarger(than sourceWidth: Int) -> [Int] {
        guard let resize, !resize.upscale else { return [] }
        return resize.sizes.filter { $0 > sourceWidth }
    }

    /// This variant resized to the width `size` alone (one of its `sizes`).
    public func sized(_ size: Int) -> VariantSpec {
        var sized = self
        sized.resize = resize.map {
            ResizeSpec(width: size, height: nil, fit: $0.fit, upscale: $0.upscale, crop: $0.crop, sharpen: $0.sharpen)
        }
        return sized
    }

    /// One variant per format of ``formats`` (with none, the path's): this variant writing
    /// that format alone (its `formats` that one extension, which `{ext}` in its path stands
    /// for), its settings those of the format's block (``formatSettings``) over the variant's,
    /// without the settings the format does not have (`lossless` is WebP's, `effort` WebP's
    /// and AVIF's, `progressive`, `subsampling` and `optimize-coding` JPEG's).
    public func eachFormat() -> [VariantSpec] {
        let extensions: [String?] = formats.isEmpty ? [nil] : formats
        return extensions.map { ext in
            var one = self
            if let ext { one.formats = [ext] }
            one.formatSettings = [:]
            guard let format = ImageFormat(extension: ext ?? pathTemplate.fixedExtension ?? "") else { return one }
            one.regions = one.regions.writing(format)
            if let block = formatSettings[format] {
                one.quality = block.quality ?? one.quality
                one.lossless = block.lossless ?? one.lossless
                one.progressive = block.progressive ?? one.progressive
                one.subsampling = block.subsampling ?? one.subsampling
                one.effort = block.effort ?? one.effort
                one.optimizeCoding = block.optimizeCoding ?? one.optimizeCoding
            }
            if !FormatOption.lossless.formats.contains(format) { one.lossless = false }
            if !FormatOption.effort.formats.contains(format) { one.effort = nil }
            if !FormatOption.progressive.formats.contains(format) {
                one.progressive = false
                one.subsampling = .auto
                one.optimizeCoding = false
            }
            return one
        }
    }

    /// The settings of one format's block (`jpeg:`, `webp:`, `avif:`): each nil where the block
    /// leaves the variant's.
    public struct FormatSettings: Hashable, Sendable {
        public var quality: Int?
        public var lossless: Bool?
        public var progressive: Bool?
        public var subsampling: ChromaSubsampling?
        public var effort: Int?
        public var optimizeCoding: Bool?

        public init(
            quality: Int? = nil, lossless: Bool? = nil, progressive: Bool? = nil, subsampling: ChromaSubsampling? = nil,
            effort: Int? = nil, optimizeCoding: Bool? = nil
        ) {
            (self.quality, self.lossless, self.progressive, self.subsampling) = (quality, lossless, progressive, subsampling)
            (self.effort, self.optimizeCoding) = (effort, optimizeCoding)
        }

        /// The keys a block of `format` takes, in the order the canonical form prints them.
        public static func keys(of format: ImageFormat) -> [String] {
            switch format {
            case .jpeg: ["quality", "progressive", "subsampling", "optimize-coding"]
            case .webp: ["quality", "lossless", "effort"]
            case .avif: ["quality", "effort"]
            case .png, .tiff: []
            }
        }
    }

    /// The formats that take a block of their own, by the block's key.
    public static let formatBlocks: [(key: String, format: ImageFormat)] = [("jpeg", .jpeg), ("webp", .webp), ("avif", .avif)]

    /// What `{ext}` in the path stands for: the one format of a variant of ``eachFormat()``,
    /// else nil (the input's extension).
    public var outputExtension: String? { formats.count == 1 ? formats[0] : nil }

    /// What the pixels of an output depend on, besides the input (a variant sets nothing else
    /// the render reads: the output's bit depth is the encoder's choice, after it): outputs of
    /// one input whose keys are equal are rendered once and encoded each in its format (the
    /// formats of one variant, and any two variants that differ only in how they are encoded).
    public var renderKey: RenderKey {
        RenderKey(filters: filters, edge: edge, colour: colour, resize: resize, regions: regions)
    }

    /// See ``renderKey``.
    public struct RenderKey: Hashable, Sendable {
        public let filters: [FilterSpec]
        public let edge: EdgeRule
        public let colour: ColourMode
        public let resize: ResizeSpec?
        public let regions: RegionMask
    }

    /// Whether both say the same thing; locations are not compared.
    public static func == (a: VariantSpec, b: VariantSpec) -> Bool {
        a.name == b.name && a.pathTemplate == b.pathTemplate && a.formats == b.formats && a.filters == b.filters
            && a.edge == b.edge
            && a.colour == b.colour && a.quality == b.quality && a.lossless == b.lossless
            && a.progressive == b.progressive && a.subsampling == b.subsampling && a.metadata == b.metadata
            && a.effort == b.effort && a.optimizeCoding == b.optimizeCoding && a.formatSettings == b.formatSettings
            && a.resize == b.resize && a.background == b.background
            && a.regions == b.regions && a.regionFile == b.regionFile && a.detection == b.detection
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(pathTemplate)
        hasher.combine(formats)
        hasher.combine(filters)
        hasher.combine(edge)
        hasher.combine(colour)
        hasher.combine(quality)
        hasher.combine(lossless)
        hasher.combine(progressive)
        hasher.combine(subsampling)
        hasher.combine(metadata)
        hasher.combine(effort)
        hasher.combine(optimizeCoding)
        hasher.combine(formatSettings)
        hasher.combine(resize)
        hasher.combine(background)
        hasher.combine(regions)
        hasher.combine(regionFile)
        hasher.combine(detection)
    }
}
