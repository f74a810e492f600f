/// A length along one axis of the output image: pixels, or a percentage of the image's width
/// (for `x` and `width`) or height (for `y` and `height`), resolved against the image the
/// chain renders.
public enum RegionLength: Hashable, Sendable {
    /// A number of output pixels.
    case pixels(Double)
    /// A percentage of the image's extent along the axis (`50` is half of it).
    case percent(Double)

    /// The length as the manifest writes it: a number (whole numbers without a fraction),
    /// followed by `%` for a percentage.
    public var text: String {
        switch self {
        case .pixels(let p): ParameterValue.number(p).description
        case .percent(let q): ParameterValue.number(q).description + "%"
        }
    }

    /// The largest magnitude of a length in pixels (2²⁴, 16,777,216), and of a corner radius or a
    /// feather: beyond any side of an image blurfarm decodes (the pixel limit keeps them far
    /// smaller). A larger number places nothing anyone meant, and beyond about 10¹⁵ a box's
    /// edges lose the pixel's centre to rounding (`x: 0, width: 1e20` covered half the image and
    /// filtered none of it), or trap when made whole: such numbers are refused where they are
    /// written, never taken as a silent no-op.
    public static let largestPixels = 16_777_216.0
    /// The largest magnitude of a percentage (10,000%: a hundred images across).
    public static let largestPercent = 10_000.0

    /// Why this length cannot place a region, in words (`1e+20 pixels is beyond any image: at
    /// most 16777216`), or nil when it can: finite and within ``largestPixels`` or
    /// ``largestPercent``.
    public var placementProblem: String? {
        let (value, limit, unit) = switch self {
        case .pixels(let p): (p, Self.largestPixels, " pixels")
        case .percent(let q): (q, Self.largestPercent, "%")
        }
        guard value.isFinite else { return "\(value) is not a number a region can be placed by" }
        guard abs(value) <= limit else {
            return "\(ParameterValue.number(value).description)\(unit) is beyond any image: at most "
                + "\(ParameterValue.number(limit).description)\(unit) either way"
        }
        return nil
    }

    /// Why `value` cannot be a corner radius or a feather in pixels, or nil: finite, ≥ 0 and at
    /// most ``largestPixels``.
    public static func pixelsProblem(_ value: Double) -> String? {
        guard value.isFinite, value >= 0 else { return "must be a number of pixels >= 0" }
        guard value <= largestPixels else {
            return "\(ParameterValue.number(value).description) pixels is beyond any image: at most "
                + "\(ParameterValue.number(largestPixels).description)"
        }
        return nil
    }

    /// The length in pixels for an image `extent` pixels long along the axis.
    public func pixels(of extent: Int) -> Double {
        switch self {
        case .pixels(let p): p
        case .percent(let q): q * Double(extent) / 100
        }
    }
}

/// One shape of a variant's `regions`: where its filters apply (docs/manifest.md, "Regions").
///
/// Placed in output pixels (after resize and orientation), y pointing down; pixel `(i, j)` is
/// the unit square whose centre is `(i + 0.5, j + 0.5)`, so `x: 0, width: 10` covers pixels 0
/// to 9 exactly.
public struct Region: Hashable, Sendable {
    /// The shape's outline.
    public enum Shape: String, Hashable, Sendable, CaseIterable {
        /// A rectangle, with rounded corners when ``Region/cornerRadius`` > 0.
        case rect
        /// The ellipse inscribed in the box.
        case ellipse
    }

    public var shape: Shape
    /// The box's left edge.
    public var x: RegionLength
    /// The box's top edge.
    public var y: RegionLength
    /// The box's width (> 0).
    public var width: RegionLength
    /// The box's height (> 0).
    public var height: RegionLength
    /// The radius of a rectangle's corners in pixels (0: square corners; at most half the
    /// shorter side is used).
    public var cornerRadius: Double
    /// The width in pixels of the ramp from no filtering to full filtering, inside the outline
    /// (0: a hard edge).
    public var feather: Double

    public init(
        shape: Shape = .rect, x: RegionLength, y: RegionLength, width: RegionLength, height: RegionLength,
        cornerRadius: Double = 0, feather: Double = 0
    ) {
        self.shape = shape
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.cornerRadius = cornerRadius
        self.feather = feather
    }

    /// The box in output pixels for an image covering `image`: (left, top, right, bottom).
    public func box(in image: Rect) -> (left: Double, top: Double, right: Double, bottom: Double) {
        let left = Double(image.x) + x.pixels(of: image.width)
        let top = Double(image.y) + y.pixels(of: image.height)
        return (left, top, left + width.pixels(of: image.width), top + height.pixels(of: image.height))
    }

    /// The region placed in an image covering `image`: its box and the numbers its outline is
    /// measured by, computed once for the many pixels a row or a tile asks about.
    public func placed(in image: Rect) -> Placed { Placed(self, box: box(in: image)) }

    /// A region placed in an image (``placed(in:)``): what ``signedDistance(x:y:in:)`` and
    /// ``coverage(x:y:in:)`` compute for each pixel, the box and its centre made once.
    public struct Placed: Sendable {
        public let shape: Shape
        /// The box in output pixels.
        public let left: Double, top: Double, right: Double, bottom: Double
        /// The box's centre and half its sides.
        let cx: Double, cy: Double, hx: Double, hy: Double
        let cornerRadius: Double
        public let feather: Double

        init(_ region: Region, box b: (left: Double, top: Double, right: Double, bottom: Double)) {
            shape = region.shape
            (left, top, right, bottom) = b
            (cx, cy) = ((b.left + b.right) / 2, (b.top + b.bottom) / 2)
            (hx, hy) = ((b.right - b.left) / 2, (b.bottom - b.top) / 2)
            cornerRadius = region.cornerRadius
            feather = region.feather
        }

        /// ``Region/signedDistance(x:y:in:)``.
        public func signedDistance(x px: Double, y py: Double) -> Double {
            let dx = abs(px - cx), dy = abs(py - cy)
            switch shape {
            case .rect:
                let r = min(max(cornerRadius, 0), hx, hy)
                let qx = dx - hx + r, qy = dy - hy + r
                let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
                return outside + min(max(qx, qy), 0) - r
            case .ellipse:
                let ux = dx / hx, uy = dy / hy
                let k0 = (ux * ux + uy * uy).squareRoot()
                let k1 = ((ux / hx) * (ux / hx) + (uy / hy) * (uy / hy)).squareRoot()
                guard k1 > 0 else { return -min(hx, hy) }  // the centre
                return k0 * (k0 - 1) / k1
            }
        }

        /// ``Region/coverage(x:y:in:)``.
        public func coverage(x i: Int, y j: Int) -> Double {
            let px = Double(i) + 0.5, py = Double(j) + 0.5
            guard left < px, px < right, top < py, py < bottom else { return 0 }
            let d = signedDistance(x: px, y: py)
            guard d < 0 else { return 0 }
            guard feather > 0 else { return 1 }
            let t = min(-d / feather, 1)
            return t * t * (3 - 2 * t)
        }
    }

    /// The signed distance in pixels from the point `(px, py)` to the outline: negative inside,
    /// positive outside. Exact for rectangles, rounded or not, and for circles; for other
    /// ellipses the usual first-order estimate `k0 (k0 − 1) / k1` (k0 = |p / r|, k1 = |p / r²|,
    /// p from the centre, r the semi-axes), exact on the outline and within a fraction of a
    /// pixel of the true distance over a feather's width.
    public func signedDistance(x px: Double, y py: Double, in image: Rect) -> Double {
        placed(in: image).signedDistance(x: px, y: py)
    }

    /// How much of the filtered pixel the output pixel `(i, j)` takes, 0...1:
    /// with d the ``signedDistance(x:y:in:)`` of the pixel's centre and f the feather,
    /// `1` for d ≤ −f, `0` for d ≥ 0, and `smoothstep(−d / f)` between (t² (3 − 2t)); a hard
    /// edge (f = 0) is 1 for d < 0 and 0 otherwise. The ramp lies inside the outline, so every
    /// pixel whose centre is outside it is the source's; and a centre not strictly inside the
    /// box is outside, whatever the last bit of d says on its edge (so that the row's coverage
    /// and a tile's, which go by the box first, are the pixel's: ``RegionMask``).
    public func coverage(x i: Int, y j: Int, in image: Rect) -> Double {
        placed(in: image).coverage(x: i, y: j)
    }

    /// Whether the box reaches beyond `image` (it is clipped there: pixels beyond the image do
    /// not exist), and whether it lies wholly outside it (it then changes nothing). An edge
    /// within a millionth of a pixel of the image's is on it: a region file's box that ends at
    /// the image's edge (x + width = the file's width) comes back as percentages whose pixels
    /// sum to one rounding step past it (1000 + 920 of 1920, at 320 wide: 320.00000000000006).
    public func placement(in image: Rect) -> (partlyOutside: Bool, whollyOutside: Bool) {
        let b = box(in: image)
        let e = 1e-6
        let (l, t, r, btm) = (Double(image.x), Double(image.y), Double(image.maxX), Double(image.maxY))
        let whollyOutside = b.right <= l + e || b.left >= r - e || b.bottom <= t + e || b.top >= btm - e
        let partlyOutside = b.left < l - e || b.top < t - e || b.right > r + e || b.bottom > btm + e
        return (partlyOutside, whollyOutside)
    }
}
