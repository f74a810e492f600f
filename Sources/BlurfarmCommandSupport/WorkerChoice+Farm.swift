import BlurfarmFarm
import BlurfarmImageIO
import BlurfarmManifest
import BlurfarmSystem
import Foundation
import Logging

/// What renders for `run`, `apply` and `serve` (``WorkerChoice``: worker processes or threads
/// of this process), chosen from the options and the configuration, and the farm's settings
/// for it.
extension WorkerChoice {
    /// The choice `--workers` and `--threads` ask for, else the configuration's `workers`; a
    /// cap on the workers is said as a warning.
    public static func chosen(
        workers: Int?, threads: Int?, configuration: FarmConfiguration, plugins: [String], oneImage: Bool = false
    ) throws(WorkerChoice.Failure) -> WorkerChoice {
        let choice = try WorkerChoice(
            workers: workers, threads: threads, configuredWorkers: configuration.workers, plugins: plugins, oneImage: oneImage)
        if let capped = choice.capped { printWarning(capped) }
        return choice
    }

    /// The farm's settings for this choice: the workers run ``Installation/workerExecutable(environment:)`` with this
    /// process's environment, load plugins from the configuration's folders, detectors find their models in
    /// ``Installation/modelFolder(environment:)``, log through
    /// `logger`, and stop with `stop`. The recipes name libvips's version as `libvips` finds it
    /// (the state folder's cache or a worker), else as this process loads it.
    public func farmSettings(
        farm: some FarmLocating, configuration: FarmConfiguration, stop: StopRequest, logger: Logger,
        libvips: LibvipsVersion? = nil
    ) -> FarmSettings {
        FarmSettings(
            workers: workers, threads: threads,
            workerExecutable: Installation.workerExecutable(environment: ProcessInfo.processInfo.environment),
            workerEnvironment: ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" },
            pluginFolders: farm.pluginFolders(configuration),
            modelFolder: Installation.modelFolder(environment: ProcessInfo.processInfo.environment), configuration: configuration,
            configurationPath: farm.absoluteConfigurationPath, stateFolder: farm.stateFolder(configuration),
            recipeVersions: { Release.recipeVersions(libvips: libvips?.version ?? ImageReader.libvipsVersion) }, stop: stop,
            logger: logger)
    }

    /// The farm of a command that runs jobs (`run`, `apply -o`) with this choice, its events told
    /// to `printer`, stopped by the signals `interrupts` answers (made before the command
    /// started anything: ``Farm/startedAnsweringSignals(_:interrupts:onEvent:)``). The caller
    /// shuts the farm down when done, however it ends.
    public func startFarm(
        _ farm: some FarmLocating, configuration: FarmConfiguration, printer: RunPrinter, interrupts: Interrupts,
        libvips: LibvipsVersion? = nil
    ) -> Farm {
        let settings = farmSettings(
            farm: farm, configuration: configuration, stop: interrupts.stop, logger: farm.logger(), libvips: libvips)
        return Farm.startedAnsweringSignals(settings, interrupts: interrupts, onEvent: printer.handle)
    }
}
