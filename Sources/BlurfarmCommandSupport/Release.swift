import BlurfarmImageIO

/// blurfarm's release, and the versions every output's recipe carries (docs/scheduling.md): a
/// new one of either makes every output run again.
public enum Release {
    public static let version = "0.3.0"

    /// The recipes' versions with libvips's as this process loads it.
    public static var recipeVersions: String { recipeVersions(libvips: ImageReader.libvipsVersion) }

    /// The versions of a recipe with `libvips`'s version.
    public static func recipeVersions(libvips: String) -> String { "blurfarm \(version); libvips \(libvips)" }
}
