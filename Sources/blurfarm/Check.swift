import ArgumentParser
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmSystem
import Foundation

/// `blurfarm check`: validate jobs and print their plans, or (`--status`) what a run would do
/// to each output, without touching a pixel.
struct Check: FarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check job manifests and print what they would do, without touching a pixel.",
        discussion: """
            Parses and validates each manifest and the configuration, expands the inputs, and \
            prints the plan: each input with its size (read from the file's header), its \
            outputs, each variant's filter chain with its reach in pixels, and the tiles.

            With --status, a dry run: for every output, what `run` would decide (the same \
            decision): up to date, stale (input changed, recipe changed, output changed, not \
            recorded), missing, failed earlier, and the recorded outputs `run --prune` would \
            remove (would be pruned). Nothing is decoded, no lock is taken, nothing is written.

            With --json, the plan or the status as JSON on standard output (docs/json.md).

            An input glob that matches no file is named, with its place in the manifest: a \
            warning when another glob of the job matched, an error when none did. Globs are \
            case-sensitive (docs/manifest.md).

            Exit status: 0 valid, every input glob matches and every input is readable; 1 \
            valid but an input glob matches no file, some input is unreadable (or a folder \
            under a glob, or a file name holding U+F780…U+F7FF: one line each), or some output \
            cannot be rendered by its filters (a plugin answering out of bounds); 2 a manifest \
            or the configuration is invalid.
            """)

    @Argument(help: "Job manifests.")
    var jobs: [String]

    @OptionGroup var farm: FarmOptions

    @OptionGroup var admission: AdmissionOptions

    @Option(help: "Tile side in pixels, overriding the manifest and configuration (0: one tile per image).")
    var tile: Int?

    @Flag(help: "Say what a run would do to each output (up to date, stale, missing, failed earlier, would be pruned); decodes nothing, writes nothing.")
    var status = false

    @Flag(help: "Print JSON (docs/json.md) instead of text.")
    var json = false

    func execute() throws {
        let (loaded, registry, plans) = try loadJobs(jobs, farm: farm, tileOverride: tile)
        let configuration = admission.applied(to: loaded)
        var unreadable = 0
        for plan in plans {
            for line in plan.refused { printError("\(plan.manifestPath): \(line)") }
            for line in plan.passedThrough { printWarning("\(plan.manifestPath): \(line)") }
            unreadable += plan.refused.count
            if !plan.unmatchedGlobs.isEmpty {
                printDiagnostics(Diagnostics(plan.unmatchedGlobs))
                unreadable += 1
            }
        }
        if status {
            if !(try printStatus(plans, configuration: configuration, registry: registry)) { unreadable += 1 }
        } else {
            var jobs: [JobPlanJSON] = []
            for plan in plans {
                let (job, failures) = describe(plan, configuration: configuration, registry: registry)
                unreadable += failures
                jobs.append(job)
            }
            if json { try printJSON(jobs) }
        }
        if unreadable > 0 { throw ExitCode(ExitStatus.someFailed) }
    }

    /// The plan of one job as `--json` gives it (docs/json.md); printed as text unless `--json`.
    /// Returns it with the number of inputs whose header cannot be read.
    private func describe(_ plan: JobPlan, configuration: FarmConfiguration, registry: FilterRegistry)
        -> (JobPlanJSON, Int)
    {
        var unreadable = 0
        if !json {
            print("\(plan.manifestPath): job '\(plan.job.name)': \(counted(plan.inputs.count, "input")), \(counted(plan.outputCount, "output")), "
                + (plan.tileSize == 0 ? "one tile per image" : "tiles of \(plan.tileSize) px"))
            if plan.inputs.isEmpty { print("  no file matches the inputs") }
        }
        var inputs: [JobPlanJSON.Input] = []
        for input in plan.inputs {
            let header: ImageHeader
            do {
                header = try ImageReader.header(ofFile: input.path)
            } catch {
                unreadable += 1
                if !json { print("  \(ShownName.of(input.relativePath)): cannot be read") }
                printError(error.description)
                inputs.append(JobPlanJSON.Input(
                    input: input.relativePath, error: error.description,
                    outputs: input.outputs.map { JobPlanJSON.Output(variant: $0.variant.name, output: $0.path) }))
                continue
            }
            let over = header.pixelCount > configuration.pixelLimit
            let overMemory = Self.overMemoryLimit(header, input, plan, configuration, registry)
            if !json {
                let notes = [over ? " (over the pixel limit)" : "", overMemory ? " (over the memory limit)" : ""]
                print("  \(ShownName.of(input.relativePath))  \(header.width)x\(header.height)\(notes.joined())")
            }
            var outputs: [JobPlanJSON.Output] = []
            for output in input.outputs {
                let described = describe(output, header, plan, registry)
                if let problem = described.error {
                    unreadable += 1
                    if !json { print("    \(output.variant.name) -> \(ShownName.of(output.path))  cannot be rendered") }
                    printError("\(input.relativePath): \(output.variant.name): \(problem)")
                } else if !json {
                    print("    \(output.variant.name) -> \(ShownName.of(output.path))  " + described.text)
                }
                outputs.append(described)
            }
            for skipped in input.notEnlarged {
                if !json { print("    \(skipped.variant) -> \(ShownName.of(skipped.output))  not made: \(skipped.reason)") }
                outputs.append(JobPlanJSON.Output(variant: skipped.variant, output: skipped.output, notMade: skipped.reason))
            }
            inputs.append(JobPlanJSON.Input(
                input: input.relativePath, width: header.width, height: header.height, overPixelLimit: over,
                overMemoryLimit: overMemory, outputs: outputs))
        }
        return (
            JobPlanJSON(
                job: plan.job.name, manifest: plan.manifestPath, tile: plan.tileSize, refused: plan.refused,
                inputs: inputs),
            unreadable
        )
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
        let streamed = header.orientation == 1 ? fullSize.filter { JobRunner.canStream($0, verify: plan.job.verify, registry: registry) } : []
        if !streamed.isEmpty {
            let chains = streamed.map { JobRunner.chain(of: $0, registry: registry) }
            let needed = DecodeMemory.streamed(header.decodeSource, JobRunner.streaming(chains, tileSize: plan.tileSize))
            if needed.map({ $0 > share }) ?? true { return true }
        }
        guard streamed.count < fullSize.count else { return false }
        return header.decodeMemory.map { $0 > share } ?? true
    }

    private func describe(_ output: PlannedOutput, _ header: ImageHeader, _ plan: JobPlan, _ registry: FilterRegistry)
        -> JobPlanJSON.Output
    {
        let variant = output.variant
        var described = JobPlanJSON.Output(variant: variant.name, output: output.path)
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
        if !variant.filters.isEmpty {
            let chain = JobRunner.chain(of: output, registry: registry)
            warnAboutRegions(of: variant, image: Rect(width: size.width, height: size.height), input: output)
            if let problem = chain.problem(forImage: Rect(width: size.width, height: size.height)) {
                described.error = problem.message
                return described
            }
            if let problem = chain.regionProblem(forImage: Rect(width: size.width, height: size.height)) {
                described.error = problem
                return described
            }
            let outputRect = chain.outputRect(forImage: Rect(width: size.width, height: size.height))
            size = (outputRect.width, outputRect.height)
            described.tiles = TileGrid(bounds: outputRect, tileSize: plan.tileSize).count
            described.filters = chain.filters.map { $0.spec.description }
            described.reach = chain.reach.map { ReachJSON(x: $0.x, y: $0.y) }
            described.pluginReach = chain.reach == nil
            described.edge = variant.edge.rawValue
            described.colour = variant.colour.rawValue
            if !variant.regions.isEverywhere {
                described.regions = variant.regions.regions.count
                described.invert = variant.regions.invert
            }
            if variant.regions.extent != .image {
                described.box = JobPlanJSON.BoxJSON(
                    x: outputRect.x, y: outputRect.y, width: outputRect.width, height: outputRect.height,
                    cutout: variant.regions.extent == .cutout)
            }
        }
        described.width = size.width
        described.height = size.height
        return described
    }

    /// Warns, at each region's place in the manifest, about a region of `variant` that reaches
    /// beyond its output image (`image`, after resize): it is clipped, or changes nothing.
    private func warnAboutRegions(of variant: VariantSpec, image: Rect, input output: PlannedOutput) {
        var warnings: [Diagnostic] = []
        // The variant's regions, each at its place; then each filter's own, at the filter's.
        let placed = variant.regions.regions.enumerated().map { index, region in
            (region, index, "", index < variant.regionLocations.count ? variant.regionLocations[index] : variant.location)
        } + variant.filters.enumerated().flatMap { k, filter in
            filter.regions.regions.enumerated().map { index, region in
                (region, index, " of filter \(k + 1) ('\(filter.name)')", k < variant.filterLocations.count ? variant.filterLocations[k] : variant.location)
            }
        }
        for (region, index, of, location) in placed {
            let placement = region.placement(in: image)
            guard placement.partlyOutside else { continue }
            let what = placement.whollyOutside ? "lies outside" : "reaches beyond"
            let effect = placement.whollyOutside ? "it changes nothing" : "it is clipped"
            warnings.append(.warning(
                "region \(index + 1)\(of) of output '\(variant.name)' \(what) its \(image.width)x\(image.height) image "
                    + "(\(ShownName.of(output.path))): \(effect)", at: location))
        }
        if !warnings.isEmpty { printDiagnostics(Diagnostics(warnings)) }
    }

    /// Prints what a run would do to each output of `plans` (text, or JSON with `--json`).
    /// Returns false when a job's records cannot be read (said on standard error).
    private func printStatus(_ plans: [JobPlan], configuration: FarmConfiguration, registry: FilterRegistry) throws
        -> Bool
    {
        let state = farm.stateFolder(configuration)
        let plugins = FarmJob.pluginHashes(of: plans, registry: registry)
        var jobs: [JobStatusJSON] = []
        var readable = true
        for plan in plans {
            let folder = JobStateFolder(state: state, jobName: plan.job.name, manifestPath: plan.manifestPath)
            let records: OutputRecords.Contents
            do throws(StateError) {
                // With the records of the job's shards (`run --shard`) not merged yet.
                records = try ShardRecords.read(folder)
            } catch {
                printError("\(error)")
                readable = false
                continue
            }
            let outputs = IncrementalRun.status(
                of: plan, records: records, versions: Blurfarm.recipeVersions, plugins: plugins,
                pixelLimit: configuration.pixelLimit)
            var counts: [String: Int] = [:]
            for output in outputs { counts[output.state.rawValue, default: 0] += 1 }
            jobs.append(JobStatusJSON(job: plan.job.name, manifest: plan.manifestPath, outputs: outputs, counts: counts))
            if json { continue }
            let tally = OutputState.allCases.compactMap { state in
                counts[state.rawValue].map { "\($0) \(state)" }
            }
            print("\(plan.manifestPath): job '\(plan.job.name)': \(counted(plan.outputCount, "output"))"
                + (tally.isEmpty ? "" : ": " + tally.joined(separator: ", ")))
            let width = outputs.map { $0.state.description.count }.max() ?? 0
            for output in outputs {
                let shown = output.state.description
                var line = "  \(shown)\(String(repeating: " ", count: width - shown.count))  \(ShownName.of(output.output))"
                if let variant = output.variant { line += " (\(variant) of \(ShownName.of(output.input)))" }
                if let reason = output.reason { line += ": \(reason)" }
                print(line)
            }
        }
        if json { try printJSON(jobs) }
        return readable
    }
}

/// Prints `value` as JSON on standard output, as the reports write it (docs/json.md): the
/// read commands' `--json`.
func printJSON(_ value: some Encodable) throws {
    FileHandle.standardOutput.write(try RunReport.json(value) + Data("\n".utf8))
}

/// One job's plan as `check --json` prints it (docs/json.md).
struct JobPlanJSON: Encodable {
    struct Output: Encodable {
        var variant: String
        var output: String
        /// The output's size, after the resize and the filters.
        var width: Int?
        var height: Int?
        var resize: String?
        var filters: [String]?
        /// The chain's reach in pixels, `{"x":…,"y":…}`; absent for plugins (their regions of interest).
        var reach: ReachJSON?
        /// True when the reach is the plugins' regions of interest, tile by tile.
        var pluginReach: Bool?
        var edge: String?
        var colour: String?
        /// How many regions the filters apply to; absent when they apply everywhere.
        var regions: Int?
        /// With `regions`: true when the filters apply everywhere but the regions.
        var invert: Bool?
        /// With `output: region`: the box written, `{"x":…,"y":…,"width":…,"height":…}` in the
        /// image's pixels, and whether it is a cutout (the coverage its alpha).
        var box: BoxJSON?
        var tiles: Int?
        /// Why the output's filters cannot render it (a plugin answering out of bounds).
        var error: String?
        /// Why the output is not made: a size of `sizes` larger than the input, not enlarged.
        var notMade: String?

        /// As the text plan prints it after the output's path.
        var text: String {
            var parts: [String] = []
            if let resize { parts.append("resize \(resize)") }
            if let filters, !filters.isEmpty {
                parts.append(filters.joined(separator: " | "))
                parts.append(
                    reach.map { "reach \(Reach(x: $0.x, y: $0.y))" } ?? "reach: the plugins' regions of interest, tile by tile")
                parts.append("edge \(edge ?? ""), colour \(colour ?? "")")
                if let regions { parts.append((invert == true ? "everywhere but " : "in ") + counted(regions, "region")) }
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

    struct BoxJSON: Encodable {
        var x, y, width, height: Int
        var cutout: Bool
    }

    struct Input: Encodable {
        var input: String
        var width: Int?
        var height: Int?
        var overPixelLimit: Bool?
        /// Whether decoding it at full size needs more than one decode's share of `memory-limit`.
        var overMemoryLimit: Bool?
        /// Why the header cannot be read.
        var error: String?
        var outputs: [Output]
    }

    var job: String
    var manifest: String
    var tile: Int
    var refused: [String]
    var inputs: [Input]
}

/// A reach in pixels, each side.
struct ReachJSON: Encodable {
    var x: Int
    var y: Int
}

/// One job's status as `check --status --json` prints it (docs/json.md).
struct JobStatusJSON: Encodable {
    var job: String
    var manifest: String
    var outputs: [OutputStatus]
    /// Outputs by state.
    var counts: [String: Int]
}
