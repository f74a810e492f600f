import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmCore
import BlurfarmFarm
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmPlugins
import BlurfarmCoordinator
import BlurfarmImageIO
import BlurfarmSystem
import Foundation
import Logging

/// The options every job command shares: which farm configuration to use.
struct FarmOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The farm configuration (default: $BLURFARM_CONFIG, else the shipped config/blurfarm.conf).",
        valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp(
        "What the engine logs on standard error: trace, debug, info, notice (workers lost and replaced), warning "
            + "(workers that cannot start), error, critical.", valueName: "level"))
    var logLevel: Logger.Level = .warning

    /// The engine's logger: lines on standard error at ``logLevel`` and above (quiet under
    /// cron by default: a worker lost and replaced is a `notice`).
    func logger() -> Logger { .standardError(label: "blurfarm", level: logLevel) }

    /// The configuration file in force, as given, or `nil` for the built-in defaults:
    /// `--config`, else `$BLURFARM_CONFIG`, else the shipped `config/blurfarm.conf` of the
    /// checkout the executable was built in.
    var configurationPath: String? {
        FarmConfiguration.path(
            given: config, environment: ProcessInfo.processInfo.environment,
            shipped: Installation.shipped("config/blurfarm.conf"))
    }

    /// The configuration file in force as an absolute path (what reports record).
    var absoluteConfigurationPath: String? { configurationPath.map(Self.absolute) }

    /// `path` made absolute against the working directory, `.` and `..` resolved.
    static func absolute(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }

    /// The state folder in force, absolute: the configuration's `state`, else the user's
    /// state folder (`$XDG_STATE_HOME/blurfarm`, else `$HOME/.local/state/blurfarm`, the home
    /// folder from the password database when `HOME` is unset).
    func stateFolder(_ configuration: FarmConfiguration) -> String {
        Self.absolute(configuration.stateFolder(environment: ProcessInfo.processInfo.environment))
    }

    /// The configuration; its ``Diagnostics`` thrown when it has errors (``CommandFailure``
    /// prints them and ends with the exit status of an invalid input). Its folders are absolute:
    /// relative ones in the file are relative to the file's folder, wherever blurfarm runs from.
    func loadOrExit() throws -> FarmConfiguration {
        try (configurationPath.map(ConfigurationDecoder.decode(fileAtPath:)) ?? .success(FarmConfiguration())).get()
            .withFolders(madeAbsoluteBy: Self.absolute)
    }

    /// The configuration's plugin folders, `{build}` resolved: what workers are given.
    func pluginFolders(_ configuration: FarmConfiguration) -> [String] {
        configuration.pluginFolders(executableFolder: Installation.executableFolder)
    }

    /// The built-in filters and the configuration's plugins, for checking and planning: the
    /// plugins' filters here never run (plugins run in worker processes); with `names`, only the
    /// plugins among them, unless one is not found (``FilterRegistry/naming(_:from:)``: `apply`).
    /// A plugin that fails to load is printed as a warning and left out.
    func registry(for configuration: FarmConfiguration, naming names: [String]? = nil) -> FilterRegistry {
        let loader = PluginLoader(folders: pluginFolders(configuration))
        let (registry, problems) =
            names.map { FilterRegistry.naming($0, from: loader) } ?? FilterRegistry.withPlugins(from: loader, mayRun: false)
        for problem in problems { printWarning("plugin not loaded: \(problem)") }
        return registry
    }
}

/// The admission limits of the commands that decode (`apply`, `run`, `check`), overriding the
/// configuration's: what is checked from an image's header before it is decoded
/// (docs/image-io.md, "Admission").
struct AdmissionOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Refuse images with more pixels than this, from the header, before decoding "
            + "(default: the configuration's pixel-limit, else 1073741824, 32768 x 32768).", valueName: "pixels"))
    var pixelLimit: Int?

    @Option(help: ArgumentHelp(
        "The most memory one image's decode may use, checked against the estimate from its header before decoding, "
            + "e.g. 16GB, 12GiB, 8000000000 (default: the configuration's memory-limit, else all this process may use).",
        valueName: "bytes"))
    var memoryLimit: ByteCount?

    @Option(help: ArgumentHelp(
        "Refuse a job asking for more outputs than this (inputs x sizes x formats of every variant), before planning it "
            + "(default: the configuration's max-outputs, else 1000000).", valueName: "outputs"))
    var maxOutputs: Int?

    func validate() throws {
        if let pixelLimit, pixelLimit < 1 { throw ValidationError("--pixel-limit must be at least 1") }
        if let maxOutputs, maxOutputs < 1 { throw ValidationError("--max-outputs must be at least 1") }
    }

    /// `configuration` with the limits given on the command line.
    func applied(to configuration: FarmConfiguration) -> FarmConfiguration {
        configuration.limited(pixelLimit: pixelLimit, memoryLimit: memoryLimit?.bytes, maxOutputs: maxOutputs)
    }
}

/// A number of bytes on the command line, as the configuration writes it
/// (``FarmConfiguration/byteCount(_:)``: `16GB`, `12GiB`, `8000000000`).
struct ByteCount: ExpressibleByArgument {
    let bytes: Int

    init?(argument: String) {
        guard let bytes = FarmConfiguration.byteCount(argument) else { return nil }
        self.bytes = bytes
    }
}

/// Exit statuses of the job commands (docs/commands.md).
enum ExitStatus {
    /// Every output was written (`run`), the job is valid and every input readable (`check`).
    static let success: Int32 = 0
    /// Some outputs failed (the others were written), or (`check`) some inputs cannot be read.
    static let someFailed: Int32 = 1
    /// A manifest or the configuration is invalid: nothing ran.
    static let invalid: Int32 = 2
    /// Another run holds the lock of a job named (`run` without `--wait`): nothing ran.
    static let locked: Int32 = 3
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

extension FarmOptions {
    /// The review sheet of `plans` in `folder` (docs/privacy.md, "Reviewing"), and one line on
    /// standard error saying where and what to look at first.
    func writeSheet(_ plans: [JobPlan], to folder: String, configuration: FarmConfiguration) throws {
        let entries: [ReviewSheet.Entry]
        do {
            // The detectors the plans name, each loaded once (a missing one fails its photos).
            var detectors: [String: Result<RegionDetector, PluginError>] = [:]
            for name in Set(plans.flatMap { $0.job.outputs.compactMap { $0.detection?.detector } }) {
                detectors[name] = Result { () throws(PluginError) in
                    try RegionDetector(
                        named: name, loader: PluginLoader(folders: pluginFolders(configuration)),
                        modelFolder: Installation.modelFolder(environment: ProcessInfo.processInfo.environment),
                        stateFolder: stateFolder(configuration))
                }
            }
            entries = try ReviewSheet.write(
                plans, to: folder, detectors: detectors,
                limits: (configuration.pixelLimit, configuration.memoryLimit ?? ImageReader.usableMemory, configuration.decodedImages))
        } catch {
            throw CommandError("--sheet '\(ShownName.of(folder))': cannot write the review sheet: \(error.localizedDescription)")
        }
        if entries.isEmpty {
            printWarning("--sheet: no variant takes its regions from a file per input or a detector: the sheet lists no photo")
        }
        let first = entries.filter { $0.status != .boxes }.count
        // On standard error: standard output is the plan (or its JSON).
        FileHandle.standardError.write(Data((
            "blurfarm: review sheet: \(ShownName.of((folder as NSString).appendingPathComponent("index.html"))): "
                + "\(counted(entries.count, "photo")), \(first) to look at first (failing, unredacted or without a box)\n").utf8))
    }
}
