import BlurfarmCore

/// A variant's regions found in each input by a detector (`regions: {detect: faces}`,
/// `apply --redact faces`; docs/manifest.md#regions-a-detector-finds): the boxes scoring at least
/// ``threshold``, each grown as deface's `--mask-scale` grows its boxes, as ``shape``,
/// feathered by ``feather`` output pixels. The run detects (or finds the boxes cached) for each
/// input whose outputs it makes; the plan reads nothing for it.
public struct RegionDetection: Hashable, Sendable {
    /// The detector plugin's name (`lib<name>.so` in the plugin folders).
    public var detector: String
    /// The lowest score a box is kept with, in (0, 1]; deface's default, 0.2.
    public var threshold: Double
    /// How much larger than the detector's box the region is: each side moves out by
    /// (grow - 1) times the box's width or height, as deface's `--mask-scale` (its default
    /// 1.3 makes a box 1.6 times as wide and high: a detector's box is the face, the region
    /// takes in the hair, ears and chin); from 1 to ``largestGrow``.
    public var grow: Double
    public var shape: Region.Shape
    /// The ramp inside each shape's edge, in output pixels.
    public var feather: Double

    public static let defaultThreshold = 0.2
    public static let defaultGrow = 1.3
    /// A region ten times the box's size on each side: beyond it, a box would cover the photo.
    public static let largestGrow = 10.0

    public init(
        detector: String, threshold: Double = defaultThreshold, grow: Double = defaultGrow, shape: Region.Shape = .ellipse,
        feather: Double = 0
    ) {
        self.detector = detector
        self.threshold = threshold
        self.grow = grow
        self.shape = shape
        self.feather = feather
    }

    /// The keys of `regions: {detect: …}`, in the order the printer writes them.
    public static let keys = ["detect", "threshold", "grow", "shape", "feather"]

    /// The detector and its settings in words: `faces threshold=0.2 grow=1.3 shape=ellipse
    /// feather=0` (what `check` says and its JSON's `detect`).
    public var settings: String {
        "\(detector) threshold=\(ParameterValue.number(threshold)) grow=\(ParameterValue.number(grow)) "
            + "shape=\(shape.rawValue) feather=\(ParameterValue.number(feather))"
    }

    /// What an output's recipe says of these regions (their boxes follow from the input's
    /// bytes and the detector's identity, which the recipe names beside).
    public var recipe: String { "regions=detect " + settings }

    /// The detector's `boxes` this detection keeps (scoring at least ``threshold``), each
    /// grown by ``grow``, in the same pixels, with their scores and labels.
    public func kept(_ boxes: RegionFile.Contents) -> [RegionFile.Contents.Box] {
        let spread = grow - 1
        return boxes.boxes.filter { ($0.score ?? 1) >= threshold }.map { box in
            RegionFile.Contents.Box(
                x: box.x - spread * box.width, y: box.y - spread * box.height, width: box.width * (1 + 2 * spread),
                height: box.height * (1 + 2 * spread), label: box.label, score: box.score)
        }
    }

    /// The regions of the detector's `boxes`, measured on the image as shown: those
    /// ``kept(_:)``, as shares of that image (so that they land on the same pixels after any
    /// resize).
    public func regions(of boxes: RegionFile.Contents) -> [Region] {
        kept(boxes).map { box in
            let share = { (value: Double, extent: Double) in RegionLength.percent(value / extent * 100) }
            return Region(
                shape: shape, x: share(box.x, boxes.width), y: share(box.y, boxes.height),
                width: share(box.width, boxes.width), height: share(box.height, boxes.height), feather: feather)
        }
    }
}
