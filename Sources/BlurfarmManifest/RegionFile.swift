import BlurfarmCore
import Foundation

/// A variant's regions read per input from a file beside it (`regions: {from: …}`): the boxes
/// a detector of the user's choice found (faces, licence plates), one JSON file per image
/// (docs/regions.schema.json):
///
///     {"width": 1920, "height": 1080,
///      "boxes": [{"x": 812, "y": 140, "width": 180, "height": 220, "label": "face", "score": 0.97}]}
///
/// `width` and `height` are the size of the image the boxes were measured on (the input as
/// displayed, upright); each box is placed at the same fraction of the output (after any
/// resize), as the shape the manifest says, feathered inside its edge. `label` and `score`
/// are carried for the detector's own filtering; blurfarm does not read them.
public struct RegionFile: Hashable, Sendable {
    /// What to do when an input has no such file.
    public enum Missing: String, CaseIterable, Hashable, Sendable {
        /// The input fails, with a line naming the file; the others run.
        case error
        /// The input's output is its source, unfiltered (said as a warning).
        case skip
    }

    /// The file of each input: a path template with the outputs' placeholders, relative to the
    /// input's folder.
    public var path: PathTemplate
    /// The shape each box becomes: its rectangle, or the ellipse inscribed in it (faces).
    public var shape: Region.Shape
    /// The ramp inside each shape's edge, in output pixels.
    public var feather: Double
    public var missing: Missing

    public init(path: PathTemplate, shape: Region.Shape = .rect, feather: Double = 0, missing: Missing = .error) {
        self.path = path
        self.shape = shape
        self.feather = feather
        self.missing = missing
    }

    /// The keys of `regions: {…}`, in the order the printer writes them.
    public static let keys = ["from", "shape", "feather", "missing"]

    /// What is wrong with a region file: where in its JSON (`$.boxes[2].width`) and why.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let path: String
        public let message: String
        public var description: String { "\(path): \(message)" }
    }

    /// The largest region file read (a detector's boxes for one image are a few kilobytes).
    public static let maximumBytes = 1 << 20
    /// The most boxes a file may hold (each pixel's coverage looks at each).
    public static let maximumBoxes = 1024

    private struct Contents: Decodable {
        struct Box: Decodable {
            var x: Double
            var y: Double
            var width: Double
            var height: Double
        }
        var width: Double
        var height: Double
        var boxes: [Box]
    }

    /// The regions of the file's `bytes`, as this spec shapes them
    /// (``regions(from:shape:feather:)``).
    public func regions(from bytes: [UInt8]) throws(Problem) -> [Region] {
        try Self.regions(from: bytes, shape: shape, feather: feather)
    }

    /// The regions of a region file's `bytes`: each box as a share of the image the file
    /// measured, as `shape`, feathered by `feather` pixels.
    /// - Throws: ``Problem`` naming the JSON path of the first thing wrong.
    public static func regions(from bytes: [UInt8], shape: Region.Shape, feather: Double) throws(Problem) -> [Region] {
        let contents: Contents
        do {
            contents = try JSONDecoder().decode(Contents.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw problem(error)
        } catch {
            throw Problem(path: "$", message: "\(error)")
        }
        guard contents.width.isFinite, contents.width > 0 else { throw Problem(path: "$.width", message: "must be a number > 0") }
        guard contents.height.isFinite, contents.height > 0 else { throw Problem(path: "$.height", message: "must be a number > 0") }
        guard contents.boxes.count <= maximumBoxes else {
            throw Problem(path: "$.boxes", message: "more than \(maximumBoxes) boxes")
        }
        var regions: [Region] = []
        for (i, box) in contents.boxes.enumerated() {
            for (name, value, positive) in [
                ("x", box.x, false), ("y", box.y, false), ("width", box.width, true), ("height", box.height, true),
            ] where !value.isFinite || (positive && value <= 0) {
                throw Problem(path: "$.boxes[\(i)].\(name)", message: positive ? "must be a number > 0" : "must be a number")
            }
            let shares = [box.x / contents.width, box.y / contents.height, box.width / contents.width, box.height / contents.height]
                .map { $0 * 100 }
            guard shares.allSatisfy(\.isFinite), shares[2] > 0, shares[3] > 0 else {
                throw Problem(path: "$.boxes[\(i)]", message: "is out of any range an image has, for its width and height")
            }
            let share = { (value: Double, extent: Double) in RegionLength.percent(value / extent * 100) }
            regions.append(Region(
                shape: shape, x: share(box.x, contents.width), y: share(box.y, contents.height),
                width: share(box.width, contents.width), height: share(box.height, contents.height), feather: feather))
        }
        return regions
    }

    /// A decoding error as the JSON path it happened at.
    private static func problem(_ error: DecodingError) -> Problem {
        let path = JSONPath.of
        switch error {
        case .keyNotFound(let key, let context):
            return Problem(path: path(context.codingPath + [key]), message: "is missing")
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let last = context.codingPath.last
            let expected =
                last == nil ? "must be an object with 'width', 'height' and 'boxes'"
                : last?.stringValue == "boxes" ? "must be a list of boxes"
                : last?.intValue != nil ? "must be an object with 'x', 'y', 'width' and 'height'"
                : "must be a number"
            return Problem(path: path(context.codingPath), message: expected)
        case .dataCorrupted(let context):
            return Problem(path: path(context.codingPath), message: context.codingPath.isEmpty ? "is not JSON" : "is not valid")
        @unknown default:
            return Problem(path: "$", message: "\(error)")
        }
    }
}
