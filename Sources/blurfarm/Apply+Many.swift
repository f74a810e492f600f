import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmFarm
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmSystem
import Foundation

/// `apply INPUT... -o TEMPLATE`: the command line made into a job (one variant, its inputs as
/// globs relative to the working directory) and run by the farm `run` uses: the same plan
/// (two inputs writing one file refused before anything runs, an output never an input), the
/// same workers and images in flight, the same atomic writes, progress line and exit statuses.
/// The job keeps no records: every output is written, as `apply` writes its one image.
extension Apply {
    /// The name of the job, in messages and the summary line.
    static let jobName = "apply"

    func runMany() throws {
        let configuration = try admission.applied(to: farm.loadOrExit())
        let registry = farm.registry(for: configuration, naming: filters.compactMap(FilterOption.name(of:)))
        let job = try CommandError.invalid { () throws(OptionError) in
            let variant = try manyVariant(registry: registry)  // its mistakes first, then the inputs'
            let inputs = try (template == nil ? [input] : paths).map(GlobPattern.ofArgument)
            return JobSpec(name: Self.jobName, inputs: inputs, outputs: [variant], tile: tile)
        }
        // The working directory stands for the manifest's folder: relative inputs and outputs
        // are relative to it, as a shell's are. ("apply" is no file: nothing can be written there
        // under that name, which has no image extension.)
        let loader = JobLoader(configuration: configuration, registry: registry, configurationPath: farm.configurationPath)
        var plan = try loader.plan(job, manifestPath: Self.jobName).get()
        do throws(ImageIOError) {
            try plan.checkOutputFormats(encodeOptions)
        } catch {
            throw CommandError(error.description, exitCode: ExitStatus.invalid)
        }
        if let tile { plan = plan.withTileSize(tile) }

        let choice = try WorkerChoice.chosen(
            workers: workers, threads: threads, configuration: configuration,
            plugins: registry.plugins(usedBy: [plan]))
        let printer = RunPrinter(quiet: false, verbose: verbose, alwaysSummary: verbose, keepsRecords: false, log: nil)
        let interrupts = Interrupts(stop: StopRequest())
        defer { withExtendedLifetime(interrupts) {} }
        let stop = interrupts.stop
        let started = choice.startFarm(farm, configuration: configuration, printer: printer, interrupts: interrupts)
        defer { started.shutdown() }
        let outcome = started.wait(started.submit(FarmJob(plan: plan, registry: registry, keepsRecords: false)))!
        if let signal = stop.signalNumber { throw ExitCode(128 + signal) }
        // The sheet reads the boxes the run cached: nothing is detected twice.
        if let sheet { try farm.writeSheet([plan], to: sheet, configuration: configuration) }
        if outcome.failures > 0 { throw ExitCode(ExitStatus.someFailed) }
    }

    /// The one variant the options describe, written where `-o` says.
    private func manyVariant(registry: FilterRegistry) throws(OptionError) -> VariantSpec {
        var (specs, mask) = try chainOptions(registry: registry)
        // `apply IN OUT --redact`: OUT names the one output.
        let pathTemplate = try PathTemplate.ofOutputOption(template ?? output)
        let detection = redact.map {
            RegionDetection(detector: $0, threshold: threshold, grow: grow, shape: regionsShape ?? .ellipse, feather: regionsFeather)
        }
        if detection != nil {
            if filters.isEmpty { specs = [try FilterOption.parse("redact", registry: registry).get()] }
            mask = RegionMask(regions: [], invert: invertRegions)
        }
        return VariantSpec(
            name: Self.jobName, pathTemplate: pathTemplate, filters: specs, edge: edge, colour: colour, quality: quality,
            lossless: lossless, metadata: metadata, effort: effort, optimizeCoding: optimizeCoding,
            resize: resize.map { ResizeSpec(width: $0.width, height: $0.height, fit: fit, upscale: upscale) },
            regions: mask, detection: detection)
    }
}
