import BlurfarmCore

/// Which output pixels of a tile of an 8-bit RGBA image read only opaque pixels: those whose
/// whole `(2R + 1)²` window has alpha 255. Under `clamp` and `mirror` the window's pixels
/// beyond the image are copies of pixels inside the window clipped to the image, so that
/// clipped rectangle is what is checked.
///
/// Such a pixel's premultiplied blur is the blur of its colours with alpha exactly 255 (the
/// weights sum to 1), which the fixed-point RGB arithmetic computes within its proved bound
/// (``FixedPointMask``), alpha included: the gaussian renders those pixels in fixed point and
/// the others in `Float32` (``GaussianBlur/render(tile:source:image:edge:into:)-(_,SampleBuffer<UInt8>,_,_,_)``).
/// The answer for a pixel depends on its window alone, never on the tile, so neither do its bits.
enum OpaqueWindows {
    /// Every pixel's window is opaque.
    case opaque
    /// No pixel's window is.
    case translucent
    /// Some are: one flag a pixel of the tile, row by row.
    case mixed([Bool])

    /// The pixels the windows of radius `r` of `tile`'s pixels read, clipped to `image`.
    private static func region(of tile: Rect, image: Rect, radius r: Int) -> Rect {
        let x0 = max(tile.x - r, image.x), y0 = max(tile.y - r, image.y)
        return Rect(x: x0, y: y0, width: min(tile.maxX + r, image.maxX) - x0, height: min(tile.maxY + r, image.maxY) - y0)
    }

    /// ``opaque`` when everything the windows of radius `r` of `tile`'s pixels read is opaque,
    /// ``translucent`` when none of it is, else nil (each window may still be of one kind): the cheap
    /// look (the lowest and highest alpha) before the pixel by pixel one.
    static func uniform(tile: Rect, source: SampleBuffer<UInt8>, image: Rect, radius r: Int) -> OpaqueWindows? {
        precondition(source.channels == 4)
        let region = region(of: tile, image: image, radius: r)
        precondition(source.rect.contains(region), "the source \(source.rect) does not hold \(region)")
        // Alpha is each pixel's top byte as a little-endian word.
        let (lowest, highest) = source.withUnsafeSamples { base -> (UInt32, UInt32) in
            var lowest = UInt32.max, highest = UInt32.min
            for y in region.y..<region.maxY {
                let row = UnsafeRawPointer(base + (y - source.rect.y) * source.rowStride + (region.x - source.rect.x) * 4)
                for x in 0..<region.width {
                    let word = row.loadUnaligned(fromByteOffset: 4 * x, as: UInt32.self)
                    lowest = min(lowest, word)
                    highest = max(highest, word)
                }
            }
            return (lowest, highest)
        }
        return lowest >= 0xFF00_0000 ? .opaque : highest < 0xFF00_0000 ? .translucent : nil
    }

    /// The windows of radius `r` of the pixels of `tile` (inside `image`), read from `source`
    /// (4 channels, holding the tile grown by `r` and clipped to the image).
    init(tile: Rect, source: SampleBuffer<UInt8>, image: Rect, radius r: Int) {
        if let uniform = Self.uniform(tile: tile, source: source, image: image, radius: r) {
            self = uniform
            return
        }
        let region = Self.region(of: tile, image: image, radius: r)
        let (x0, x1, y0, y1) = (region.x, region.maxX, region.y, region.maxY)
        let (width, height) = (region.width, region.height)
        // Separable: whether each region row's window around each tile column holds a pixel
        // with alpha below 255 (from the next such pixel at or after the window's start),
        // then, down each column, how many of a window's rows do.
        var rowHit = [UInt8](repeating: 0, count: height * tile.width)
        var next = [Int32](repeating: 0, count: width + 1)
        source.withUnsafeSamples { base in
            for y in 0..<height {
                let row = base + (y0 - source.rect.y + y) * source.rowStride + (x0 - source.rect.x) * 4 + 3
                next[width] = Int32(width)
                for x in stride(from: width - 1, through: 0, by: -1) { next[x] = row[4 * x] == 255 ? next[x + 1] : Int32(x) }
                for x in 0..<tile.width {
                    let left = max(tile.x + x - r, x0) - x0, right = min(tile.x + x + r, x1 - 1) - x0
                    rowHit[y * tile.width + x] = next[left] <= right ? 1 : 0
                }
            }
        }
        var flags = [Bool](repeating: false, count: tile.area)
        var hits = [UInt16](repeating: 0, count: tile.width)
        var opaqueCount = 0
        var (top, bottom) = (0, 0)  // region rows [top, bottom) are in `hits`
        for y in 0..<tile.height {
            let from = max(tile.y + y - r, y0) - y0, to = min(tile.y + y + r + 1, y1) - y0
            while bottom < to {
                for x in 0..<tile.width { hits[x] &+= UInt16(rowHit[bottom * tile.width + x]) }
                bottom += 1
            }
            while top < from {
                for x in 0..<tile.width { hits[x] &-= UInt16(rowHit[top * tile.width + x]) }
                top += 1
            }
            for x in 0..<tile.width where hits[x] == 0 {
                flags[y * tile.width + x] = true
                opaqueCount += 1
            }
        }
        self = opaqueCount == 0 ? .translucent : opaqueCount == tile.area ? .opaque : .mixed(flags)
    }
}
