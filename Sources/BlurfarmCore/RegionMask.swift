/// Where a variant's filters apply: its `regions` and `invert` (docs/manifest.md, "Regions").
/// No regions means everywhere (``isEverywhere``), as before regions existed.
///
/// The coverage of a pixel is the largest of its ``Region/coverage(x:y:in:)`` over the regions
/// (their union; 0 with no region), or one minus that with `invert`. A pure function of the
/// pixel's position and the image's rectangle: the same whatever tile, band or worker asks.
public struct RegionMask: Hashable, Sendable {
    /// The shapes; empty: the filters apply everywhere.
    public var regions: [Region]
    /// Whether the filters apply everywhere but the regions (the subject kept sharp).
    public var invert: Bool

    /// The mask of `regions`, inverted when `invert`.
    public init(regions: [Region] = [], invert: Bool = false) {
        self.regions = regions
        self.invert = invert
    }

    /// No mask: the filters apply to every pixel.
    public static let everywhere = RegionMask()

    /// Whether the filters apply to every pixel: no regions (`invert` alone means nothing).
    public var isEverywhere: Bool { regions.isEmpty }

    /// The coverage of pixel `(x, y)` of an image covering `image`, 0...1: 0 keeps the source
    /// pixel, 1 takes the filtered one.
    public func coverage(x: Int, y: Int, in image: Rect) -> Double {
        guard !isEverywhere else { return 1 }
        var c = 0.0
        for region in regions {
            c = max(c, region.coverage(x: x, y: y, in: image))
            if c == 1 { break }
        }
        return invert ? 1 - c : c
    }

    /// The coverage of every pixel of row `y` from `x` to `x + count − 1`, as `Float`s in
    /// `into` (which holds `count`): what the blend multiplies by.
    /// The same values as ``coverage(x:y:in:)``, without measuring a distance to a region
    /// whose box the row, or the pixel's centre, lies outside (its coverage there is 0: every
    /// shape lies inside its box).
    public func coverage(row y: Int, from x: Int, count: Int, in image: Rect, into: inout [Float]) {
        into.removeAll(keepingCapacity: true)
        guard !isEverywhere else {
            into.append(contentsOf: repeatElement(1, count: count))
            return
        }
        let centreY = Double(y) + 0.5
        let crossing = regions.map { region -> (Region, left: Double, right: Double)? in
            let box = region.box(in: image)
            return box.top < centreY && centreY < box.bottom ? (region, box.left, box.right) : nil
        }.compactMap { $0 }
        for i in x..<(x + count) {
            let centreX = Double(i) + 0.5
            var c = 0.0
            for (region, left, right) in crossing where left < centreX && centreX < right {
                c = max(c, region.coverage(x: i, y: y, in: image))
                if c == 1 { break }
            }
            into.append(Float(invert ? 1 - c : c))
        }
    }
}
