import Foundation
import BlurfarmManifest

/// The canonical description of what makes an output's bytes: the variant's filters with all
/// their parameters (defaults filled in), edge rule, colour mode, resize, format and encoder
/// settings, and the versions of blurfarm and libvips. Part of an output's up-to-date key;
/// the output's path, the variant's name, tiling and verification are not (they do not change
/// the bytes).
public enum OutputRecipe {
    /// The recipe of `output` under `versions` (e.g. "blurfarm 0.1.0; libvips 8.14.1").
    public static func of(_ output: PlannedOutput, versions: String) -> String {
        let v = output.variant
        let format = (output.path as NSString).pathExtension.lowercased()
        let resize = v.resize.map { r in
            "\(r.width.map(String.init) ?? "-")x\(r.height.map(String.init) ?? "-") \(r.fit.rawValue)"
                + (r.upscale ? " upscale" : "")
        } ?? "none"
        return [
            "filters=[" + v.filters.map(\.description).joined(separator: ", ") + "]",
            "edge=\(v.edge.rawValue)", "colour=\(v.colour.rawValue)", "resize=\(resize)", "format=\(format)",
            "quality=\(v.quality)", "lossless=\(v.lossless)", "strip=\(v.strip)", "background=\(v.background)",
            versions,
        ].joined(separator: "; ")
    }
}
