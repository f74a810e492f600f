import BlurfarmCore
import Foundation
import BlurfarmManifest
import Synchronization

/// The canonical description of what makes an output's bytes: the variant's filters with all
/// their parameters (defaults filled in), edge rule, colour mode, resize, format and encoder
/// settings, the versions of blurfarm and libvips, and the content hash of each plugin library
/// the filters come from (a rebuilt plugin makes its outputs run again). Part of an output's
/// up-to-date key;
/// regions a detector finds are named by the detection's settings and the detector's identity
/// (the boxes follow from the input's bytes and these); the output's path, the variant's name, tiling and verification are not (they do not change
/// the bytes). A size of several (or a width alone sharing their decode) reduced from a larger
/// one's decode says so (`from=1024`): its
/// bytes are not those of a resize to that width alone; every resize names the resampler. Settings added after the first release
/// (crop, sharpening, progressive JPEG, subsampling, optimized coding, effort, sizes, regions) appear only when they differ from their defaults, so the recipes of outputs
/// that do not use them, and their records, stay as they were.
public enum OutputRecipe {
    /// What resamples (docs/image-io.md, "Lanczos-3 resampling"): blurfarm's own Lanczos-3
    /// (``LanczosResampler``) for an 8-bit colour JPEG, an 8-bit RGB PNG and every later resize
    /// of an 8-bit image without alpha (vips_resize's before, when recipes named no resampler,
    /// so outputs recorded then render again once); the word names the build's resampling,
    /// whichever library a given file takes.
    static let resampler = "lanczos3-blurfarm"

    /// The recipe of `output` under `versions` (e.g. "blurfarm 0.1.0; libvips 8.14.1"), with
    /// `plugins`: the content hash of the library of each plugin filter, by filter name.
    public static func of(_ output: PlannedOutput, versions: String, plugins: [String: String] = [:]) -> String {
        let v = output.variant
        let format = format(of: output.path)
        let resize = v.resize.map { r in
            "\(r.width.map(String.init) ?? "-")x\(r.height.map(String.init) ?? "-") \(r.fit.rawValue)"
                + (r.upscale ? " upscale" : "") + (r.fit == .cover && r.crop != .centre ? " crop=\(r.crop.rawValue)" : "")
                + (r.sharpen.map { " sharpen=\($0)" } ?? "")
                + (output.largestSize.map { $0 == r.width ? "" : " from=\($0)" } ?? "")
                + " resampler=\(resampler)"
        } ?? "none"
        var jpeg: [String] = []
        if v.progressive { jpeg.append("progressive=true") }
        if v.subsampling != .auto { jpeg.append("subsampling=\(v.subsampling.rawValue)") }
        if v.optimizeCoding { jpeg.append("optimize-coding=true") }
        if let effort = v.effort { jpeg.append("effort=\(effort)") }
        // keep-icc as `strip=` before `metadata:` (it was `strip: true`), so that its records stay
        // good; `keep` says what it keeps since its EXIF and XMP lost every picture of the
        // original in any format (`metadata=keep` once its EXIF thumbnail alone was gone): an
        // output kept with them is made once more.
        let metadata = switch v.metadata {
        case .keep: "metadata=keep-without-pictures"
        case .keepICC: "strip=true"
        case .strip: "metadata=strip"
        }
        let settings = [
            "filters=[" + v.filters.map(\.description).joined(separator: ", ") + "]",
            "edge=\(v.edge.rawValue)", "colour=\(v.colour.rawValue)", "resize=\(resize)", "format=\(format)",
            "quality=\(v.quality)", "lossless=\(v.lossless)",
        ] + jpeg + (v.detection.map { [$0.recipe] } ?? v.regions.recipeParts) + [
            metadata, "background=\(v.background)",
            versions,
        ]
        return settings.joined(separator: "; ")
            + v.filters.compactMap { filter in plugins[filter.name].map { "; plugin \(filter.name)=\($0)" } }.joined()
            + (v.detection.flatMap { d in plugins[detectorKey(d.detector)].map { "; detector \(d.detector)=\($0)" } } ?? "")
    }

    /// The format a recipe names for an output at `path`: its extension, lower case.
    static func format(of path: String) -> String { PathName.pathExtension(of: path).lowercased() }

    /// The recipes of one run's outputs (``of(_:versions:plugins:)``), each made once per
    /// shared variant, decode width, format and versions: a job's 300,000 outputs have a few
    /// recipes between them, and making each anew was a tenth of a no-change run.
    final class Made: Sendable {
        private let plugins: [String: String]
        private let made = Mutex<[Key: String]>([:])

        init(plugins: [String: String]) { self.plugins = plugins }

        /// The variant by identity (held, so that its address names no other while the run
        /// lasts), and what else a recipe reads of its output.
        private struct Key: Hashable {
            let variant: PlannedVariant
            let largestSize: Int?
            let format: String
            let versions: String

            static func == (a: Key, b: Key) -> Bool {
                a.variant === b.variant && a.largestSize == b.largestSize && a.format == b.format && a.versions == b.versions
            }
            func hash(into hasher: inout Hasher) {
                hasher.combine(ObjectIdentifier(variant))
                hasher.combine(largestSize)
                hasher.combine(format)
            }
        }

        /// ``OutputRecipe/of(_:versions:plugins:)`` of `output`.
        func of(_ output: PlannedOutput, versions: String) -> String {
            let key = Key(variant: output.shared, largestSize: output.largestSize, format: format(of: output.name), versions: versions)
            if let known = made.withLock({ $0[key] }) { return known }
            let recipe = OutputRecipe.of(output, versions: versions, plugins: plugins)
            made.withLock { $0[key] = recipe }
            return recipe
        }
    }

    /// The key of `plugins` holding the identity of the detector `name` (``RegionDetector/identity``):
    /// its model, library and schedule, which decide its boxes.
    public static func detectorKey(_ name: String) -> String { "detect \(name)" }
}
