import BlurfarmState
import BlurfarmSystem
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest

/// Reads, checks and plans one manifest, the way every command does (`check`, `run` and the
/// service): decoded against the registry's filters, outputs in a format this libvips can
/// write, planned over the file system. Every problem is a diagnostic, compiler style.
public struct JobLoader: Sendable {
    /// The configuration in force (the default tile).
    public var configuration: FarmConfiguration
    /// Built-in filters and the configuration's plugins.
    public var registry: FilterRegistry
    /// The other files every job reads (the configuration, the plugins' libraries): outputs
    /// may never overwrite these.
    public var reads: [String]
    /// The state folder whose jobs keep their inputs' sizes (``InputSizes``): planning reads
    /// them, and a plan carries them (``JobPlan/inputSizes``) for the run to keep; nil: every
    /// header is read.
    public var inputSizes: String?
    /// The folder (the state folder) where a large plan keeps its inputs while it is carried
    /// out, in an unnamed file (``SpillFile``); nil, or where it cannot, the system's temporary
    /// folder.
    public var planFolder: String?
    /// The files the run writes besides the outputs (`run --report`, `--log`): a plan refuses
    /// one that is a file the job reads or writes.
    public var runFiles: [JobPlanner.RunFile] = []
    /// The roots a served job's files stay below: its plans read region files and inputs'
    /// headers beneath them (``JobPlanner/plan(_:manifestPath:defaultTile:reads:sizes:outputLimit:partInputs:spill:runFiles:confinement:stopped:)``).
    public var confinement: RootConfinement?

    /// A loader for `configuration` and `registry`.
    public init(
        configuration: FarmConfiguration, registry: FilterRegistry, reads: [String],
        inputSizes: String? = nil
    ) {
        self.configuration = configuration
        self.registry = registry
        self.reads = reads
        self.inputSizes = inputSizes
    }

    /// The plan of the manifest file at `path`.
    public func plan(fileAtPath path: String) -> Result<JobPlan, Diagnostics> {
        JobDecoder.decode(fileAtPath: path, filters: registry.descriptors).flatMap { plan($0, manifestPath: path) }
    }

    /// The plan of a manifest's `bytes`, read from the file `manifestPath` (its folder is what
    /// its paths are relative to; diagnostics name it).
    public func plan(bytes: [UInt8], manifestPath: String) -> Result<JobPlan, Diagnostics> {
        decode(bytes: bytes, manifestPath: manifestPath).flatMap { plan($0, manifestPath: manifestPath) }
    }

    /// The plan of a manifest's `text`, read as the file `manifestPath` (its folder is what its
    /// paths are relative to; diagnostics name it).
    public func plan(text: String, manifestPath: String) -> Result<JobPlan, Diagnostics> {
        decode(text: text, manifestPath: manifestPath).flatMap { plan($0, manifestPath: manifestPath) }
    }

    /// A manifest's `bytes` decoded against the registry's filters, before the file system is
    /// read: what a caller checks (the service's roots) before ``plan(_:manifestPath:)`` walks
    /// the inputs' globs.
    public func decode(bytes: [UInt8], manifestPath: String) -> Result<JobSpec, Diagnostics> {
        JobDecoder.decode(bytes, file: manifestPath, filters: registry.descriptors)
    }

    /// A manifest's `text` decoded, as ``decode(bytes:manifestPath:)``.
    public func decode(text: String, manifestPath: String) -> Result<JobSpec, Diagnostics> {
        JobDecoder.decode(text, file: manifestPath, filters: registry.descriptors)
    }

    /// The plan of the decoded `job`, read from `manifestPath`; ended by `stopped` as
    /// ``JobPlanner/plan(_:manifestPath:defaultTile:reads:sizes:outputLimit:partInputs:spill:runFiles:confinement:stopped:)`` says.
    public func plan(_ job: JobSpec, manifestPath: String, stopped: @escaping @Sendable () -> Bool = { false }) -> Result<JobPlan, Diagnostics> {
        let unwritable = job.unwritableOutputs(ImageWriter.unavailability)
        if unwritable.hasErrors { return .failure(unwritable) }
        let spill = SpillFile(in: SpillFile.folders(preferring: planFolder))
        let sizes = inputSizes.map {
            InputSizes(folder: JobStateFolder(state: $0, jobName: job.name, manifestPath: manifestPath).path, spill: spill)
        } ?? InputSizes()
        let planned = JobPlanner.plan(
            job, manifestPath: manifestPath, defaultTile: configuration.tile, reads: reads, sizes: sizes,
            outputLimit: configuration.maxOutputs, spill: spill, runFiles: runFiles, confinement: confinement, stopped: stopped
        ).map { plan in
            var plan = plan
            if inputSizes != nil { plan.inputSizes = sizes }
            return plan
        }
        sizes.closeIndex()
        // What planning let go (the walk's files, the index of the outputs) stays with the
        // arenas of the threads that planned, which the run's threads may not share: given back,
        // a no-change run at 100k inputs peaked at 61 MB, where it peaked at 73 (`VmHWM`).
        Syscalls.returnFreedMemory()
        return planned
    }
}
