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
    /// What the output holds: the whole image, or only the regions' box (`output: region`).
    public var extent: Extent

    /// What a chain with regions writes (docs/manifest.md, "Only the region: output: region").
    public enum Extent: UInt8, Hashable, Sendable, CaseIterable {
        /// The whole image, the regions blended in.
        case image = 0
        /// Only the regions' ``box(in:)``, blended as in the whole image (a format without
        /// alpha: the source where the coverage is 0).
        case box = 1
        /// Only the regions' box, the filtered pixels with the coverage as their alpha
        /// (premultiplied: each value times the coverage), so that laid over the source at the
        /// box's place it gives the blend; what a format with alpha gets.
        case cutout = 2
    }

    /// The mask of `regions`, inverted when `invert`, written over `extent`.
    public init(regions: [Region] = [], invert: Bool = false, extent: Extent = .image) {
        self.regions = regions
        self.invert = invert
        self.extent = extent
    }

    /// The mask as a file of `format` is written with it: `output: region` (any extent but
    /// ``Extent/image``) is a ``Extent/cutout`` in a format with alpha, the ``Extent/box`` of
    /// the blended image in one without. The one place the choice is made (a manifest's
    /// variant, `apply --region-only`).
    public func writing(_ format: ImageFormat) -> RegionMask {
        guard extent != .image else { return self }
        var mask = self
        mask.extent = format.storesAlpha ? .cutout : .box
        return mask
    }

    /// The mask as an output's recipe says it: `regions=[rect x=10% y=0 width=50 height=20%
    /// corner-radius=4 feather=2, …]`, then `invert=true` when inverted, `output=region` (or
    /// `output=cutout`) for ``Extent/box`` (``Extent/cutout``); nothing for no regions.
    public var recipeParts: [String] {
        guard !isEverywhere else { return [] }
        let number = { (x: Double) in ParameterValue.number(x).description }
        let shapes = regions.map { r in
            "\(r.shape.rawValue) x=\(r.x.text) y=\(r.y.text) width=\(r.width.text) height=\(r.height.text)"
                + (r.cornerRadius > 0 ? " corner-radius=\(number(r.cornerRadius))" : "") + " feather=\(number(r.feather))"
        }
        let extent = switch extent {
        case .image: [String]()
        case .box: ["output=region"]
        case .cutout: ["output=cutout"]
        }
        return ["regions=[" + shapes.joined(separator: ", ") + "]"] + (invert ? ["invert=true"] : []) + extent
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

    /// The smallest rectangle of whole pixels holding every pixel whose centre lies strictly
    /// inside a region's box (so every pixel a region covers), clipped to `image`: what
    /// `output: region` writes. Empty when every region lies outside the image, and for no
    /// regions.
    public func box(in image: Rect) -> Rect {
        var union: Rect?
        for region in regions {
            // Clamped first (a region far beyond the image must not overflow an Int).
            let raw = region.box(in: image)
            func clampX(_ v: Double) -> Double { min(max(v, Double(image.x) - 1), Double(image.maxX) + 1) }
            func clampY(_ v: Double) -> Double { min(max(v, Double(image.y) - 1), Double(image.maxY) + 1) }
            let b = (left: clampX(raw.left), right: clampX(raw.right), top: clampY(raw.top), bottom: clampY(raw.bottom))
            // Pixel i's centre lies strictly inside (left, right) when left - 0.5 < i < right - 0.5.
            let x0 = Int((b.left - 0.5).rounded(.down)) + 1, x1 = Int((b.right - 0.5).rounded(.up))
            let y0 = Int((b.top - 0.5).rounded(.down)) + 1, y1 = Int((b.bottom - 0.5).rounded(.up))
            let pixels = Rect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0)).intersection(image)
            guard !pixels.isEmpty else { continue }
            union = union.map { $0.union(pixels) } ?? pixels
        }
        return union ?? Rect(x: image.x, y: image.y, width: 0, height: 0)
    }

    /// The coverage every pixel of `tile` has, when it is the same for all and the blend is
    /// known without measuring one: 0 when no region's box holds a pixel centre of the tile
    /// (every shape lies inside its box), 1 when a rectangle holds every centre at least its
    /// feather inside its outline (its signed distance is a convex function and exact, so the
    /// four corner centres bound the rest; a billionth of a pixel to spare), swapped with
    /// `invert`; nil when the tile must be blended pixel by pixel. What lets a tile outside
    /// the regions skip its filters, and one inside them skip the blend: the same values as
    /// ``coverage(x:y:in:)`` gives each pixel.
    public func uniformCoverage(of tile: Rect, in image: Rect) -> Float? {
        guard !isEverywhere else { return 1 }
        guard !tile.isEmpty else { return nil }
        let left = Double(tile.x) + 0.5, right = Double(tile.maxX) - 0.5
        let top = Double(tile.y) + 0.5, bottom = Double(tile.maxY) - 0.5
        let reached = regions.contains { region in
            let box = region.box(in: image)
            return box.left < right && left < box.right && box.top < bottom && top < box.bottom
        }
        let covered = reached && regions.contains { region in
            guard region.shape == .rect else { return false }
            let deepest = -max(region.feather, 0) - 1e-9
            return [(left, top), (right, top), (left, bottom), (right, bottom)].allSatisfy {
                region.signedDistance(x: $0.0, y: $0.1, in: image) <= deepest
            }
        }
        switch (reached, covered) {
        case (false, _): return invert ? 1 : 0
        case (true, true): return invert ? 0 : 1
        case (true, false): return nil
        }
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
        let crossing = regions.map { $0.placed(in: image) }.filter { $0.top < centreY && centreY < $0.bottom }
        for i in x..<(x + count) {
            let centreX = Double(i) + 0.5
            var c = 0.0
            for region in crossing where region.left < centreX && centreX < region.right {
                c = max(c, region.coverage(x: i, y: y))
                if c == 1 { break }
            }
            into.append(Float(invert ? 1 - c : c))
        }
    }
}
