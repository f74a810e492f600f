import Foundation
import BlurfarmCore
import BlurfarmSystem

/// A job's output map (`map:` in the manifest, `run --map`): what a site build needs of the
/// job's outputs, as JSON (docs/json.md, docs/output-map.schema.json). Every input that has
/// an output up to date, in plan order (input path order), with those outputs in the
/// manifest's variant and size order, and the input's placeholder. Paths are relative to the
/// map's own folder, ready for a template. Nothing in it depends on when it was written, so a
/// run that changes nothing leaves the file byte for byte as it was.
public struct OutputMap: Codable, Equatable, Sendable {
    /// The format's version: a change that could break a reader gets a new one.
    public var version: Int
    /// The job's name.
    public var job: String
    public var inputs: [Input]

    /// The version this blurfarm writes.
    public static let currentVersion = 1

    public init(job: String, inputs: [Input]) {
        version = Self.currentVersion
        self.job = job
        self.inputs = inputs
    }

    /// One input and its outputs that are up to date.
    public struct Input: Codable, Equatable, Sendable {
        /// The input's path, relative to the map's folder (a byte that is not UTF-8 shown as
        /// `\xE9`: ``pathBytes`` then has it exactly).
        public var path: String
        /// The path's exact bytes in base64, only when it is not UTF-8: what tells apart two
        /// names that show alike (`caf\xE9.png` with the byte 0xE9, and a name with a backslash).
        public var pathBytes: String?
        /// The input's size in pixels, as displayed; present with the placeholder, absent when
        /// it could not be made.
        public var width: Int?
        public var height: Int?
        /// Absent when it could not be made (said as a warning by the run).
        public var placeholder: Placeholder?
        /// At least one.
        public var outputs: [Output]

        package init(path: String, width: Int?, height: Int?, placeholder: Placeholder?, outputs: [Output]) {
            (self.path, self.width, self.height, self.placeholder, self.outputs) = (path, width, height, placeholder, outputs)
            pathBytes = OutputMap.exactBytes(of: path)
        }
    }

    /// A placeholder of an input (``InputPlaceholder``).
    public struct Placeholder: Codable, Equatable, Sendable {
        /// ThumbHash bytes in base64 (standard alphabet, padded).
        public var thumbHash: String
        /// `data:image/png;base64,...`, at most 32 pixels on its longer side.
        public var dataURI: String

        package init(thumbHash: String, dataURI: String) { (self.thumbHash, self.dataURI) = (thumbHash, dataURI) }
    }

    /// One output file, as it is on disk.
    public struct Output: Codable, Equatable, Sendable {
        /// The file's path, relative to the map's folder (as the input's: ``pathBytes`` beside
        /// it when it is not UTF-8).
        public var path: String
        public var pathBytes: String?
        /// From the path's extension: `jpeg`, `png`, `webp`, `tiff` or `avif` (the MIME type is
        /// `image/` and this).
        public var format: String
        /// Its width and height in pixels.
        public var width: Int
        public var height: Int
        /// Its size in bytes.
        public var bytes: Int
        /// The variant it came from.
        public var variant: String
        /// The size of the variant's `sizes` it is (what `{size}` expanded to); absent for a
        /// variant without `sizes`.
        public var size: Int?

        package init(path: String, format: String, width: Int, height: Int, bytes: Int, variant: String, size: Int?) {
            (self.path, self.format, self.width, self.height) = (path, format, width, height)
            (self.bytes, self.variant, self.size) = (bytes, variant, size)
            pathBytes = OutputMap.exactBytes(of: path)
        }
    }
}

extension ImageFormat {
    /// The format as the output map names it: the MIME subtype (`image/webp`).
    package var mapName: String { name.lowercased() }
}

extension OutputMap {
    /// The exact bytes of `path` in base64 when it is not UTF-8 (it carries bytes as
    /// ``PathEncoding`` does), else nil.
    static func exactBytes(of path: String) -> String? {
        PathEncoding.isUTF8(path) ? nil : Data(PathEncoding.bytes(path)).base64EncodedString()
    }

    /// `path` relative to the folder `folder`, both absolute: `..` for each folder of
    /// `folder` that `path` is not below.
    package static func relative(_ path: String, from folder: String) -> String {
        if let below = below(path, folder) { return below }
        let target = path.split(separator: "/", omittingEmptySubsequences: true)
        return (way(to: target.dropLast(), from: folder) + target.suffix(1).map(String.init)).joined(separator: "/")
    }

    /// `path` relative to `folder` when it lies below it, else nil: the rest of the path,
    /// found by its bytes (split by names, each output's path was 8% of a no-change run with a
    /// map at 100,000 inputs). Only a rest without empty names, which splitting would take out.
    private static func below(_ path: String, _ folder: String) -> String? {
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        guard path.utf8.starts(with: prefix.utf8) else { return nil }
        let rest = path.utf8.dropFirst(prefix.utf8.count)
        guard !rest.isEmpty, rest.first != UInt8(ascii: "/"), rest.last != UInt8(ascii: "/"),
            !zip(rest, rest.dropFirst()).contains(where: { $0 == UInt8(ascii: "/") && $1 == UInt8(ascii: "/") })
        else { return nil }
        return String(Substring(rest))
    }

    /// The names that lead from `folder` to the folder of `names`: `..` for each of
    /// `folder`'s that `names` do not begin with, then the rest of `names`.
    private static func way(to names: ArraySlice<Substring>, from folder: String) -> [String] {
        let base = folder.split(separator: "/", omittingEmptySubsequences: true)
        var common = 0
        while common < names.count, common < base.count, names[names.startIndex + common] == base[common] { common += 1 }
        return Array(repeating: "..", count: base.count - common) + names.dropFirst(common).map(String.init)
    }

    /// Paths made relative to one folder, as ``relative(_:from:)`` makes them, the way from
    /// it to each folder outside it worked out once: a library's inputs lie in few folders,
    /// and made name by name each input's path was a twentieth of a no-change run with a map.
    package final class RelativePaths {
        private let folder: String
        /// The way to each folder of a path met (``way(to:from:)``, joined), by its bytes.
        private var ways: [RealPath.Identity.Bytes: String] = [:]

        package init(from folder: String) { self.folder = folder }

        package func relative(_ path: String) -> String {
            if let below = OutputMap.below(path, folder) { return below }
            let name = PathName.lastName(of: path)
            guard !name.isEmpty, name != "/" else { return OutputMap.relative(path, from: folder) }
            let parent = PathName.folder(of: path)
            let key = RealPath.Identity.Bytes(parent)
            let way =
                ways[key]
                ?? {
                    let way = OutputMap.way(to: parent.split(separator: "/", omittingEmptySubsequences: true)[...], from: folder)
                        .joined(separator: "/")
                    ways[key] = way
                    return way
                }()
            return way.isEmpty ? name : way + "/" + name
        }
    }
}

/// What the output map at a path was made of when a run last wrote it, or found it holding the
/// bytes it would write: the digest of its entries (the coordinator's `OutputMapDigest`) and
/// the file's stamp then. A later run whose entries have that digest, finding the file with
/// that stamp (the same inode, size, and modification and status change times: the stamps an
/// output's record is checked by), leaves the map as it is without encoding it.
///
/// And the digest of what the run's plan gave the entries (`OutputMapDigest.plan`: the inputs
/// and outputs by path, which were published), which the records vouch for only while they are
/// as they were then: a later run with that plan, finding that file, leaves the map without
/// looking up a record or hashing an entry. The rest of an entry is the records' (an output's
/// size and bytes, an input's placeholder), and any change to them since is seen
/// (``OutputRecords/mapStamp(at:)``).
public struct OutputMapStamp: Equatable, Sendable {
    package var digest: String
    package var file: FileStamp
    /// The plan's digest, kept with the records' generation (``OutputRecords/keep(_:at:)``);
    /// read back only while the records' generation is that one, else nil. Nil when the map
    /// was left with a gap (a placeholder that could not be made, an output whose size could
    /// not be read): the next run tries again.
    package var plan: String?

    package init(digest: String, file: FileStamp, plan: String? = nil) {
        (self.digest, self.file, self.plan) = (digest, file, plan)
    }
}
