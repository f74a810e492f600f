import BlurfarmState
import BlurfarmCore
import BlurfarmManifest

/// A variant as its outputs make it (one size, one format: ``PlannedOutput/variant``), held
/// once and shared by every output of the job made by it: a plan of 300,000 outputs held a copy
/// of its variant in each, about 500 bytes, and copying them was a tenth of a no-change run.
public final class PlannedVariant: Sendable {
    public let spec: VariantSpec
    /// For the variant of one output whose regions a detector found in its input
    /// (``DetectedRegions``): the stamp of the input file searched. The output is put in place
    /// only while its input is still that file (``OutputCommit``): the boxes of one photo
    /// never redact another that took its place. Nil for every other variant.
    public let regionsOf: FileStamp?

    public init(_ spec: VariantSpec, regionsOf: FileStamp? = nil) { (self.spec, self.regionsOf) = (spec, regionsOf) }
}

/// The folder part of paths, up to and including its last `/` (empty for a path without
/// one), held once and shared by the outputs written in that folder (``PlannedOutput/path``).
public final class PathPrefix: Sendable {
    public let text: String

    public init(_ text: String) { self.text = text }

    /// The folder of the paths it begins, as ``PathName/folderInPlace(of:)`` gives it for any of
    /// them: the text without its trailing `/`s (`/` for the root; `.` for none).
    var folder: String {
        guard let last = text.utf8.lastIndex(where: { $0 != UInt8(ascii: "/") }) else { return text.isEmpty ? "." : "/" }
        return String(text[...last])
    }

    /// The prefixes of a plan being made, each made once: the outputs of a folder share one.
    struct Made {
        /// By their bytes: Swift's strings compare by canonical equivalence, and `é` and `e`
        /// with a combining accent are two folders.
        private var made: [[UInt8]: PathPrefix] = [:]
        /// The prefixes found last, one a variant for most plans (its folder, then the next
        /// variant's): compared before the dictionary hashes (a no-change run of 300,000
        /// outputs spent 2% splitting their paths).
        private var recent: [PathPrefix] = []

        /// `path` as its shared prefix and its last name.
        mutating func split(_ path: String) -> (PathPrefix, String) {
            var path = path
            let length = path.withUTF8 { bytes in bytes.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0 }
            let cut = path.utf8.index(path.startIndex, offsetBy: length)
            let (folder, name) = (path[..<cut], String(path[cut...]))
            if let prefix = recent.first(where: { $0.text.utf8.elementsEqual(folder.utf8) }) { return (prefix, name) }
            let bytes = Array(folder.utf8)
            let prefix = made[bytes] ?? PathPrefix(String(folder))
            made[bytes] = prefix
            if recent.count == 8 { recent.removeFirst() }
            recent.append(prefix)
            return (prefix, name)
        }
    }
}

/// One output to write: an input image through one variant.
public struct PlannedOutput: Sendable {
    /// The variant as this output makes it, shared with the job's other outputs of it.
    public let shared: PlannedVariant
    /// The variant as this output makes it: one size of its `sizes` (``VariantSpec/sized(_:)``),
    /// one format of its `formats` with that format's settings (``VariantSpec/eachFormat()``).
    public var variant: VariantSpec { shared.spec }
    /// Where the output goes (relative paths are relative to the working directory): its
    /// folder's ``PathPrefix``, shared with the outputs beside it, then ``name``. Held whole,
    /// the paths of a 100,000-input plan's 300,000 outputs took 24 MB; a name of up to 15
    /// bytes takes none beside the output's own.
    public var path: String { prefix.text + name }
    let prefix: PathPrefix
    /// The output's file name: its path after the last `/`.
    public let name: String
    /// The width of the decode this output shares (``decodeResize``): for one size of a variant
    /// with `sizes`, the largest of them, one decode of the input at that width serving every
    /// size; for a variant resized to one of those widths alone (``JobPlanner/sharingDecodes(_:)``),
    /// the same largest, so that it has that size's pixels. nil otherwise.
    public var largestSize: Int? { Self.width(widths.largest) }
    /// For one size of a variant with `sizes`, that size (what `{size}` expands to: the width
    /// the variant was sized to); nil otherwise.
    public var size: Int? { Self.width(widths.size) }
    /// ``largestSize`` and ``size``, -1 for none (widths are 1 or more): 16 bytes where two
    /// optional widths took 32, in each of a plan's outputs.
    private let widths: (largest: Int, size: Int)
    /// What the plan saw of the file at ``path`` (``SeenStamp``): what the up-to-date check
    /// that follows compares before it asks `stat` again.
    public let seen: SeenStamp

    /// An output made by `shared`, written to `name` in the folder of `prefix`; `seen`, what
    /// the plan saw of the file.
    init(shared: PlannedVariant, prefix: PathPrefix, name: String, largestSize: Int?, size: Int?, seen: SeenStamp) {
        self.shared = shared
        (self.prefix, self.name) = (prefix, name)
        widths = (largestSize ?? -1, size ?? -1)
        self.seen = seen
    }

    /// An output made by `shared`; `seen`, what the plan saw of the file.
    public init(shared: PlannedVariant, path: String, largestSize: Int? = nil, size: Int? = nil, seen: SeenStamp = .unseen) {
        var made = PathPrefix.Made()
        let (prefix, name) = made.split(path)
        self.init(shared: shared, prefix: prefix, name: name, largestSize: largestSize, size: size, seen: seen)
    }

    /// An output made by `variant`, held by this output alone.
    public init(variant: VariantSpec, path: String, largestSize: Int? = nil, size: Int? = nil) {
        self.init(shared: PlannedVariant(variant), path: path, largestSize: largestSize, size: size)
    }

    private static func width(_ stored: Int) -> Int? { stored < 0 ? nil : stored }

    /// Why this size of a variant with `sizes` is not written when its image came out `width`
    /// pixels wide, not its size's: the input was replaced by a narrower one after the plan
    /// read its header. Its name would claim a width it does not have; the next run plans it
    /// as not made (``NotEnlargedOutput``). Nil for any other output, or the right width.
    public func sizeMismatch(width: Int) -> OutputFailure? {
        guard let size, width != size else { return nil }
        return .verification(
            "\(path): the input became narrower than \(size) px after the job was planned (the image is \(width) px "
                + "wide): not written, as its name would claim a width it does not have; the next run plans it again")
    }

    /// The resize the input is decoded at for this output: the variant's, or for one of
    /// several sizes (and a width alone that is one of them) the largest's (the smaller sizes
    /// are reduced from it).
    public var decodeResize: ResizeSpec? {
        guard let largestSize, var resize = variant.resize else { return variant.resize }
        resize.width = largestSize
        return resize
    }
}

/// One input image and every output the job makes of it.
public struct PlannedInput: Sendable {
    /// The file to read: the manifest's folder, shared by the plan's inputs, then
    /// ``relativePath`` (held whole, the paths of 100,000 inputs took 8 MB).
    public var path: String {
        switch spelled {
        case .after(let prefix): prefix.text + relativePath
        case .whole(let path): path
        }
    }
    private let spelled: Spelled
    /// The path relative to the manifest's folder, as reports show it.
    public let relativePath: String
    public private(set) var outputs: [PlannedOutput]
    /// The sizes of variants with `sizes` that are not made because the input is narrower
    /// (``NotEnlargedOutput``), in the manifest's order.
    public var notEnlarged: [NotEnlargedOutput] = []
    /// What the plan saw of the file (``SeenStamp``), for the up-to-date check that follows.
    public var seen: SeenStamp = .unseen

    /// How ``path`` is held: ``relativePath`` after a shared prefix, or whole (a path that does
    /// not end with it).
    private enum Spelled: Sendable {
        case after(PathPrefix)
        case whole(String)
    }

    /// The input `relativePath`, read at `prefix` followed by it.
    init(prefix: PathPrefix, relativePath: String, outputs: [PlannedOutput], notEnlarged: [NotEnlargedOutput], seen: SeenStamp) {
        (spelled, self.relativePath, self.outputs, self.notEnlarged, self.seen) = (.after(prefix), relativePath, outputs, notEnlarged, seen)
    }

    /// The input `relativePath`, read at `path`.
    public init(
        path: String, relativePath: String, outputs: [PlannedOutput], notEnlarged: [NotEnlargedOutput] = [], seen: SeenStamp = .unseen
    ) {
        // By bytes: `hasSuffix` compares by canonical equivalence.
        let (bytes, relative) = (path.utf8, relativePath.utf8)
        spelled = bytes.count >= relative.count && bytes.suffix(relative.count).elementsEqual(relative)
            ? .after(PathPrefix(String(bytes.dropLast(relative.count))!)) : .whole(path)
        (self.relativePath, self.outputs, self.notEnlarged, self.seen) = (relativePath, outputs, notEnlarged, seen)
    }

    /// The same input with `outputs` (and, unless given, no sizes left unmade), its path shared.
    func with(outputs: [PlannedOutput], notEnlarged: [NotEnlargedOutput] = []) -> PlannedInput {
        var input = self
        input.outputs = outputs
        input.notEnlarged = notEnlarged
        return input
    }
}

/// What a job will do, before any pixel is touched: its inputs and their outputs.
public struct JobPlan: Sendable {
    public let job: JobSpec
    /// The manifest's path, as given.
    public let manifestPath: String
    /// The folder globs and output paths are relative to.
    public let folder: String
    /// Held packed as the planner made them (``PlannedInputs``): each read is made whole.
    public let inputs: PlannedInputs
    /// Tile side in pixels (0: one tile per image): the manifest's, else the configuration's.
    public let tileSize: Int
    /// What the inputs' globs found but the plan leaves out, one line each, names escaped: a
    /// folder that could not be read, a file whose name holds U+F780…U+F7FF. `check` and `run` print
    /// them as errors and exit with status 1; `run --prune` removes nothing for such a job.
    public var refused: [String] = []
    /// A diagnostic at each input glob that matches no file the job takes (with a note when
    /// one matches but for case): a warning when another glob of the job matched, an error
    /// when none did. `check` exits with status 1 for either, `run` for an error; `run
    /// --watch` prints them as warnings and waits for files.
    public var unmatchedGlobs: [Diagnostic] = []
    /// Outputs whose input has no region file (`missing: skip`): made from the source
    /// unfiltered, one line each; `check` and `run` print them as warnings. (A file without
    /// boxes, a detector that found nothing, does the same without a word; inverted, it is
    /// filtered everywhere.)
    public var passedThrough: [String] = []
    /// The outputs of those (`missing: skip`), as planned: published as their source,
    /// unredacted; the run's summary and report count them.
    public var unredacted: [String] = []
    /// Every region file the plan read or looked for (`regions: {from: …}`), of the inputs it
    /// planned and of those it left out: files the job reads, below the service's roots.
    public var regionFiles: [String] = []
    /// The inputs left out because their regions could not be had (a region file missing
    /// without `missing: skip`, unreadable, not as the schema says, measured on another image),
    /// each with its outputs of the variants that take regions: an output an earlier run wrote
    /// with other boxes is not left as current (``IncrementalRun/withdraw(_:)``). Their lines
    /// are in ``refused``.
    public var regionFailed: [RegionFailure] = []
    /// The inputs' sizes planning read (kept ones, and headers read where the kept one was
    /// stale) and a shard's split weighs by, for the run to keep in its records under its lock
    /// (``InputSizes/save(into:forgetting:)``): planning writes nothing. Nil for a plan
    /// without a state folder.
    public var inputSizes: InputSizes? = nil

    /// An input whose regions could not be had, and the outputs they would have placed.
    public struct RegionFailure: Sendable {
        /// The input, as planned (``PlannedInput/path``).
        public let input: String
        /// The paths of its outputs of the variants that take regions.
        public let outputs: [String]
        /// Why, in words (its line of ``refused``).
        public let reason: String
    }

    /// Every output of the job.
    public var outputCount: Int { inputs.outputCount }
}

extension PlannedOutput {
    /// The same output made by `variant`, its regions found in the input file of `regionsOf`
    /// (``DetectedRegions``).
    func with(variant: VariantSpec, regionsOf: FileStamp) -> PlannedOutput {
        PlannedOutput(
            shared: PlannedVariant(variant, regionsOf: regionsOf), prefix: prefix, name: name, largestSize: largestSize,
            size: size, seen: .unseen)
    }
}

extension JobPlan {
    /// The same plan with other inputs (every list of what it left out kept).
    func withInputs(_ inputs: PlannedInputs) -> JobPlan {
        JobPlan(
            job: job, manifestPath: manifestPath, folder: folder, inputs: inputs, tileSize: tileSize, refused: refused,
            unmatchedGlobs: unmatchedGlobs, passedThrough: passedThrough, unredacted: unredacted, regionFiles: regionFiles,
            regionFailed: regionFailed)
    }

    /// The same plan with another tile side (the command line's `--tile`).
    public func withTileSize(_ tileSize: Int) -> JobPlan {
        JobPlan(
            job: job, manifestPath: manifestPath, folder: folder, inputs: inputs, tileSize: tileSize, refused: refused,
            unmatchedGlobs: unmatchedGlobs, passedThrough: passedThrough, unredacted: unredacted, regionFiles: regionFiles,
            regionFailed: regionFailed)
    }
}

extension ResizeSpec {
    /// The size a thumbnail of a `width` × `height` image gets (as ``ImageReader``'s
    /// thumbnail computes it), for plans.
    public func targetSize(width: Int, height: Int) -> (width: Int, height: Int) {
        let w = Double(width), h = Double(height)
        switch fit {
        case .exact:
            let tw = self.width ?? width, th = self.height ?? height
            return upscale ? (tw, th) : (min(tw, width), min(th, height))
        case .cover:
            let tw = self.width ?? width, th = self.height ?? height
            return upscale ? (tw, th) : (min(tw, width), min(th, height))
        case .inside:
            var scale = Double.infinity
            if let tw = self.width { scale = min(scale, Double(tw) / w) }
            if let th = self.height { scale = min(scale, Double(th) / h) }
            if !upscale { scale = min(scale, 1) }
            return (max(1, Int((w * scale).rounded())), max(1, Int((h * scale).rounded())))
        }
    }
}
