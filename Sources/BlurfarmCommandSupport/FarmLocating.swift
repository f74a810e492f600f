import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmPlugins
import BlurfarmSystem
import Foundation
import Logging

/// The options every job command shares (`--config`, `--log-level`) and what follows from them:
/// the configuration in force, its state and plugin folders, the logger. The command's
/// `FarmOptions` parses the two; everything else is here, where the tests reach it too.
public protocol FarmLocating {
    /// `--config`: the farm configuration as given.
    var config: String? { get }
    /// `--log-level`: what the farm logs on standard error.
    var logLevel: Logger.Level { get }
}

extension FarmLocating {
    /// The farm's logger: lines on standard error at ``logLevel`` and above (quiet under
    /// cron by default: a worker lost and replaced is a `notice`).
    public func logger() -> Logger { .standardError(label: "blurfarm", level: logLevel) }

    /// The configuration file in force, as given, or `nil` for the built-in defaults:
    /// `--config`, else `$BLURFARM_CONFIG`, else the shipped `config/blurfarm.conf` of the
    /// checkout the executable was built in.
    public var configurationPath: String? {
        FarmConfiguration.path(
            given: config, environment: ProcessInfo.processInfo.environment,
            shipped: Installation.shipped("config/blurfarm.conf"))
    }

    /// The configuration file in force as an absolute path (what reports record).
    public var absoluteConfigurationPath: String? { configurationPath.map(Self.absolute) }

    /// `path` made absolute against the working directory, `.` and `..` resolved.
    public static func absolute(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }

    /// The state folder in force, absolute: the configuration's `state`, else the user's
    /// state folder (`$XDG_STATE_HOME/blurfarm`, else `$HOME/.local/state/blurfarm`, the home
    /// folder from the password database when `HOME` is unset).
    public func stateFolder(_ configuration: FarmConfiguration) -> String {
        Self.absolute(configuration.stateFolder(environment: ProcessInfo.processInfo.environment))
    }

    /// The configuration; its ``Diagnostics`` thrown when it has errors (the command prints
    /// them and ends with the exit status of an invalid input). Its folders are absolute:
    /// relative ones in the file are relative to the file's folder, wherever blurfarm runs from.
    public func loadOrExit() throws(Diagnostics) -> FarmConfiguration {
        try (configurationPath.map(ConfigurationDecoder.decode(fileAtPath:)) ?? .success(FarmConfiguration())).get()
            .withFolders(madeAbsoluteBy: Self.absolute)
    }

    /// The configuration's plugin folders, `{build}` resolved: what workers are given.
    public func pluginFolders(_ configuration: FarmConfiguration) -> [String] {
        configuration.pluginFolders(executableFolder: Installation.executableFolder)
    }

    /// The built-in filters and the configuration's plugins, for checking and planning: the
    /// plugins' filters here never run (plugins run in worker processes); with `names`, only the
    /// plugins among them, unless one is not found (``FilterRegistry/naming(_:from:)``: `apply`).
    /// A plugin that fails to load is printed as a warning and left out.
    public func registry(for configuration: FarmConfiguration, naming names: [String]? = nil) -> FilterRegistry {
        let loader = PluginLoader(folders: pluginFolders(configuration))
        let (registry, problems) =
            names.map { FilterRegistry.naming($0, from: loader) } ?? FilterRegistry.withPlugins(from: loader, mayRun: false)
        for problem in problems { printWarning("plugin not loaded: \(problem)") }
        return registry
    }

    /// The detectors `plans` name (`regions: {detect: …}`), by name, each loaded once as a run
    /// loads it, its model opened (or why it cannot be): what `check` asks of the boxes a run
    /// would use (`--sheet`) and of the recipes it would record (`--status`).
    public func detectors(for plans: [JobPlan], configuration: FarmConfiguration) -> [String: Result<RegionDetector, PluginError>] {
        var detectors: [String: Result<RegionDetector, PluginError>] = [:]
        for name in Set(plans.flatMap { $0.job.outputs.compactMap { $0.detection?.detector } }) {
            detectors[name] = Result { () throws(PluginError) in
                try RegionDetector(
                    named: name, loader: PluginLoader(folders: pluginFolders(configuration)),
                    modelFolder: Installation.modelFolder(environment: ProcessInfo.processInfo.environment),
                    stateFolder: stateFolder(configuration))
            }
        }
        return detectors
    }

    /// The review sheet of `plans` in `folder` (docs/privacy.md, "Reviewing"), and one line on
    /// standard error saying where and what to look at first. `detectors` are those the plans
    /// name (``detectors(for:configuration:)``, loaded here when nil: a missing one fails its
    /// photos); the boxes a run cached are read, not detected again.
    /// - Throws: ``ReviewSheetFailure`` when the folder cannot be written.
    public func writeSheet(
        _ plans: [JobPlan], to folder: String, configuration: FarmConfiguration,
        detectors: [String: Result<RegionDetector, PluginError>]? = nil
    ) throws(ReviewSheetFailure) {
        let detectors = detectors ?? self.detectors(for: plans, configuration: configuration)
        let entries: [ReviewSheet.Entry]
        do {
            entries = try ReviewSheet.write(
                plans, to: folder, detectors: detectors,
                limits: (configuration.pixelLimit, configuration.memoryLimit ?? ImageReader.usableMemory, configuration.decodedImages))
        } catch {
            throw ReviewSheetFailure(folder: folder, reason: error.localizedDescription)
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

/// `--sheet FOLDER` could not be written.
public struct ReviewSheetFailure: Error, CustomStringConvertible {
    public let folder: String
    public let reason: String

    public var description: String { "--sheet '\(ShownName.of(folder))': cannot write the review sheet: \(reason)" }
}
