import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmFarm
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmSystem
import BlurfarmPlugins
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

            With --status, a dry run: what `run` would decide of each output (the same \
            decision), counted by state, each listed but those up to date: stale (input, \
            recipe, output changed, not recorded), missing, failed earlier, the recorded outputs \
            `run --prune` would remove (would be pruned). Nothing is decoded, locked or written.

            With --json, the plan, or the status of every output, as JSON (docs/json.md).

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

    @Flag(help: "Say what a run would do (stale, missing, failed earlier, would be pruned; outputs up to date counted); decodes nothing, writes nothing.")
    var status = false

    @Flag(help: "Print JSON (docs/json.md) instead of text.")
    var json = false

    @Option(help: ArgumentHelp(
        "Also write a review sheet into this folder (index.html): each photo whose regions come from a file or a detector, its boxes drawn with their scores, failing, unredacted and box-less photos first.",
        valueName: "folder"))
    var sheet: String?

    func validate() throws { if let problem = WorkerChoice.problem(tile: tile, threads: nil, workers: nil) { throw ValidationError(problem) } }

    func execute() throws {
        let (loader, plans) = try loadJobs(jobs, farm: farm, admission: admission, tileOverride: tile)
        let (configuration, registry) = (loader.configuration, loader.registry)
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
        // The detectors as a run loads them: their identities are in the recipes, their boxes on the sheet.
        let detectors = status || sheet != nil ? farm.detectors(for: plans, configuration: configuration) : [:]
        if status {
            // A detector a run could not load refuses the run: said, not taken for recipes changed.
            for case .failure(let error) in detectors.values { printError("\(error)"); unreadable += 1 }
            // What a run would do to each output; a job whose records cannot be read, on standard error.
            let statuses = StatusDescription.of(
                plans, state: farm.stateFolder(configuration), versions: Release.recipeVersions,
                plugins: registry.pluginHashes(of: plans).merging(detectors.compactMapValues { try? $0.get() }.recipeIdentities) { $1 },
                pixelLimit: configuration.pixelLimit)
            for case .failure(let error) in statuses { printError("\(error)") }
            let jobs = statuses.compactMap { try? $0.get() }
            if json {
                try StatusDescription.json(of: jobs) { FileHandle.standardOutput.write(Data($0)) }
            } else {
                jobs.forEach { $0.forEachPart { print($0) } }
            }
            if jobs.count < statuses.count { unreadable += 1 }
        } else {
            // The plans, printed as their inputs are described; their warnings and errors on
            // standard error.
            func tell(_ warnings: [Diagnostic], _ errors: [String]) {
                if !warnings.isEmpty { printDiagnostics(Diagnostics(warnings)) }
                for error in errors { printError(error) }
                unreadable += errors.count
            }
            if json {
                try PlanDescription.json(
                    of: plans, configuration: configuration, registry: registry, { FileHandle.standardOutput.write(Data($0)) },
                    told: tell)
            } else {
                for plan in plans {
                    let (warnings, errors) = PlanDescription.text(of: plan, configuration: configuration, registry: registry) { print($0) }
                    tell(warnings, errors)
                }
            }
        }
        if let sheet { try farm.writeSheet(plans, to: sheet, configuration: configuration, detectors: detectors) }
        if unreadable > 0 { throw ExitCode(ExitStatus.someFailed) }
    }
}

/// Prints `value` as JSON on standard output, as the reports write it (docs/json.md): the
/// read commands' `--json`.
func printJSON(_ value: some Encodable) throws {
    FileHandle.standardOutput.write(try RunReport.json(value) + Data("\n".utf8))
}
