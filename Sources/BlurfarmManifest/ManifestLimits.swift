/// The limits of the manifest language, shared by manifests and the configuration file.
public enum ManifestLimits {
    /// The largest file the parser reads, in bytes (1 MiB). A job description is a few
    /// kilobytes; a larger file is a mistake (a glob pasted as a list of a million names,
    /// the wrong file), and the limit bounds the parser's time and memory.
    public static let maximumBytes = 1 << 20

    /// The deepest nesting of maps and lists the parser accepts. A job needs five levels;
    /// the limit keeps the recursive parser far from the stack's end whatever the input.
    public static let maximumDepth = 64
}
