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
enum OpaqueWindows: Equatable {
    /// Every pixel's window is opaque.
    case all
    /// No pixel's window is.
    case none
    /// Some are: one flag a pixel of the tile, row by row (empty unless asked for).
    case some([Bool])

    /// The windows of radius `r` of the pixels of `tile` (inside `image`), read from `source`
    /// (4 channels, holding the tile grown by `r` and clipped to the image). Without `pixels`,
    /// only whether the tile reads nothing but opaque pixels (``all``), no opaque pixel
    /// (``none``), or both (``some`` with no flags, though every window may still be one kind).
    init(tile: Rect, source: SampleBuffer<UInt8>, image: Rect, radius r: Int, pixels: Bool) {
        precondition(source.channels == 4)
        let x0 = max(tile.x - r, image.x), x1 = min(tile.maxX + r, image.maxX)
        let y0 = max(tile.y - r, image.y), y1 = min(tile.maxY + r, image.maxY)
        let region = Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
        precondition(source.rect.contains(region), "the source \(source.rect) does not hold \(region)")
        let (width, height) = (region.width, region.height)
        // The common cases first: everything the tile reads is opaque, or nothing it reads is
        // (alpha is each pixel's top byte as a little-endian word).
        let (lowest, highest) = source.withUnsafeSamples { base -> (UInt32, UInt32) in
            var lowest = UInt32.max, highest = UInt32.min
            for y in 0..<height {
                let row = UnsafeRawPointer(base + (y0 - source.rect.y + y) * source.rowStride + (x0 - source.rect.x) * 4)
                for x in 0..<width {
                    let word = row.loadUnaligned(fromByteOffset: 4 * x, as: UInt32.self)
                    lowest = min(lowest, word)
                    highest = max(highest, word)
                }
            }
            return (lowest, highest)
        }
        if lowest >= 0xFF00_0000 {
            self = .all
            return
        }
        if highest < 0xFF00_0000 {
            self = .none
            return
        }
        guard pixels else {
            self = .some([])
            return
        }
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
        self = opaqueCount == 0 ? .none : opaqueCount == tile.area ? .all : .some(flags)
    }
}
