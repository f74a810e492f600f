import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmPlugins
import Foundation

extension Farm {
    /// The detectors the regions of `plan` name (`regions: {detect: …}`), by name: each loaded
    /// from the farm's plugin folders and its model opened from ``FarmSettings/modelFolder``
    /// once for the farm's life; none for a plan that detects nothing.
    ///
    /// - Throws: ``PluginError``: a detector missing, or its model (the error says how to
    ///   install it).
    func detectors(for plan: JobPlan) throws(PluginError) -> [String: RegionDetector] {
        let names = Set(plan.job.outputs.compactMap { $0.detection?.detector })
        var found: [String: RegionDetector] = [:]
        for name in names.sorted() {
            if let loaded = detectors.withLock({ $0[name] }) {
                found[name] = loaded
                continue
            }
            guard let modelFolder = settings.modelFolder else {
                throw PluginError(name, "this farm has no models folder (FarmSettings.modelFolder): no detector can open its model")
            }
            let detector = try RegionDetector(
                named: name, loader: PluginLoader(folders: settings.pluginFolders), modelFolder: modelFolder,
                stateFolder: settings.stateFolder)
            found[name] = detectors.withLock { loaded in
                if let first = loaded[name] { return first }
                loaded[name] = detector
                return detector
            }
        }
        // A threshold below the detector's lowest would read boxes it never kept.
        for variant in plan.job.outputs {
            guard let detection = variant.detection, let detector = found[detection.detector],
                detection.threshold < detector.detector.lowestThreshold
            else { continue }
            throw PluginError(
                detector.detector.path,
                "variant '\(variant.name)' keeps boxes scoring \(ParameterValue.number(detection.threshold)) or more; "
                    + "'\(detection.detector)' gives none below \(ParameterValue.number(detector.detector.lowestThreshold))")
        }
        return found
    }
}

extension [String: RegionDetector] {
    /// Each detector's identity under its recipe key (``OutputRecipe/detectorKey(_:)``): what a
    /// run's recipes, and `check --status`'s, name it by.
    public var recipeIdentities: [String: String] {
        [String: String](uniqueKeysWithValues: map { (OutputRecipe.detectorKey($0.key), $0.value.identity) })
    }
}
