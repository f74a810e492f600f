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

    /// What a region file says: the size of the image its boxes were measured on, and the boxes.
    public struct Contents: Codable, Sendable {
        /// One box, in the measured image's pixels, with what the detector said of it.
        public struct Box: Codable, Sendable {
            public var x: Double
            public var y: Double
            public var width: Double
            public var height: Double
            /// Carried for the review sheet; a value of another type is refused, as the schema says.
            public var label: String?
            public var score: Double?

            private enum Keys: String, CodingKey { case x, y, width, height, label, score }

            public init(x: Double, y: Double, width: Double, height: Double, label: String? = nil, score: Double? = nil) {
                (self.x, self.y, self.width, self.height, self.label, self.score) = (x, y, width, height, label, score)
            }

            public func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: Keys.self)
                try c.encode(x, forKey: .x)
                try c.encode(y, forKey: .y)
                try c.encode(width, forKey: .width)
                try c.encode(height, forKey: .height)
                try c.encodeIfPresent(label, forKey: .label)
                try c.encodeIfPresent(score, forKey: .score)
            }

            public init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: Keys.self)
                x = try c.decode(Double.self, forKey: .x)
                y = try c.decode(Double.self, forKey: .y)
                width = try c.decode(Double.self, forKey: .width)
                height = try c.decode(Double.self, forKey: .height)
                label = try c.decodeIfPresent(String.self, forKey: .label)
                score = try c.decodeIfPresent(Double.self, forKey: .score)
            }
        }
        public var width: Double
        public var height: Double
        public var boxes: [Box]

        public init(width: Double, height: Double, boxes: [Box]) {
            (self.width, self.height, self.boxes) = (width, height, boxes)
        }
    }

    /// The regions of the file's `bytes`, as this spec shapes them, for the image `displayed`
    /// (``regions(from:shape:feather:displayed:)``).
    public func regions(from bytes: [UInt8], displayed: DisplayedImage?) throws(Problem) -> [Region] {
        try Self.regions(from: bytes, shape: shape, feather: feather, displayed: displayed)
    }

    /// The image a region file's boxes are placed on, as its header says: its size as shown
    /// (after its EXIF orientation) and that orientation (1...8).
    public struct DisplayedImage: Sendable {
        public let width: Int
        public let height: Int
        public let orientation: Int

        public init(width: Int, height: Int, orientation: Int) {
            (self.width, self.height, self.orientation) = (width, height, orientation)
        }
    }

    /// Why boxes measured on a `width` × `height` image cannot be placed on `image`, or nil
    /// when they can: the file's width and height must have the shape of the image as shown
    /// (within 1%: a detector may measure a smaller copy). Boxes a detector measured on the
    /// stored pixels of a photo turned by its EXIF orientation (320×240 for a photo shown
    /// 240×320) would be stretched onto other pixels than the faces.
    public static func sizeProblem(width: Double, height: Double, image: DisplayedImage) -> String? {
        func sameShape(_ w: Double, _ h: Double) -> Bool { abs(width * h - height * w) <= 0.01 * width * h }
        let (shownW, shownH) = (Double(image.width), Double(image.height))
        if sameShape(shownW, shownH) { return nil }
        let measured = "\(ParameterValue.number(width).description)x\(ParameterValue.number(height).description)"
        if image.orientation >= 5, sameShape(shownH, shownW) {
            return "the boxes were measured on \(measured), the stored pixels of a photo shown \(image.width)x\(image.height) "
                + "(EXIF orientation \(image.orientation)): measure them on the photo as shown, turned upright"
        }
        return "the boxes were measured on \(measured), which is not the shape of the image (\(image.width)x\(image.height) as shown)"
    }

    /// The regions of a region file's `bytes`: each box as a share of the image the file
    /// measured, as `shape`, feathered by `feather` pixels; with `displayed`, the file's size
    /// checked against the image's (``sizeProblem(width:height:image:)``).
    /// - Throws: ``Problem`` naming the JSON path of the first thing wrong.
    public static func regions(
        from bytes: [UInt8], shape: Region.Shape, feather: Double, displayed: DisplayedImage? = nil
    ) throws(Problem) -> [Region] {
        let contents = try contents(of: bytes, displayed: displayed)
        return contents.boxes.map { box in
            let share = { (value: Double, extent: Double) in RegionLength.percent(value / extent * 100) }
            return Region(
                shape: shape, x: share(box.x, contents.width), y: share(box.y, contents.height),
                width: share(box.width, contents.width), height: share(box.height, contents.height), feather: feather)
        }
    }

    /// What a region file's `bytes` say, every check of ``regions(from:shape:feather:displayed:)``
    /// made: what the review sheet draws (with the detector's scores).
    /// - Throws: ``Problem`` naming the JSON path of the first thing wrong.
    public static func contents(of bytes: [UInt8], displayed: DisplayedImage? = nil) throws(Problem) -> Contents {
        // Text other readers refuse (a comma before a bracket, a malformed number), or read
        // otherwise (a key given twice: Foundation keeps the first value, Python, JavaScript and
        // jq the last), is refused, not read one way.
        if let problem = StrictJSON.problem(in: bytes) { throw Problem(path: problem.path, message: problem.message) }
        let contents: Contents
        do {
            contents = try JSONDecoder().decode(Contents.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw problem(error)
        } catch {
            throw Problem(path: "$", message: "\(error)")
        }
        for (name, value) in [("width", contents.width), ("height", contents.height)] {
            guard value.isFinite, value > 0 else { throw Problem(path: "$.\(name)", message: "must be a number > 0") }
            if let problem = RegionLength.pixels(value).placementProblem { throw Problem(path: "$.\(name)", message: problem) }
        }
        if let displayed, let problem = sizeProblem(width: contents.width, height: contents.height, image: displayed) {
            throw Problem(path: "$.width", message: problem)
        }
        guard contents.boxes.count <= maximumBoxes else {
            throw Problem(path: "$.boxes", message: "more than \(maximumBoxes) boxes")
        }
        for (i, box) in contents.boxes.enumerated() {
            for (name, value, positive) in [
                ("x", box.x, false), ("y", box.y, false), ("width", box.width, true), ("height", box.height, true),
            ] where !value.isFinite || (positive && value <= 0) {
                throw Problem(path: "$.boxes[\(i)].\(name)", message: positive ? "must be a number > 0" : "must be a number")
            }
            // Checked as the shares of the image they become, the file's own width and height
            // being that image: a box a hundred images away places nothing anyone meant.
            let shares = [box.x / contents.width, box.y / contents.height, box.width / contents.width, box.height / contents.height]
                .map { $0 * 100 }
            for (name, share) in zip(["x", "y", "width", "height"], shares) {
                if let problem = RegionLength.percent(share).placementProblem {
                    throw Problem(path: "$.boxes[\(i)].\(name)", message: "places the box beyond any image: \(problem) of the image")
                }
            }
            guard shares[2] > 0, shares[3] > 0 else {
                throw Problem(path: "$.boxes[\(i)]", message: "is out of any range an image has, for its width and height")
            }
        }
        return contents
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
                : last?.stringValue == "label" ? "must be a string"
                : "must be a number"
            return Problem(path: path(context.codingPath), message: expected)
        case .dataCorrupted(let context):
            return Problem(path: path(context.codingPath), message: context.codingPath.isEmpty ? "is not JSON" : "is not valid")
        @unknown default:
            return Problem(path: "$", message: "\(error)")
        }
    }
}
