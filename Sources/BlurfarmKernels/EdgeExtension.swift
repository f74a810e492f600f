import BlurfarmCore

/// Applies an ``EdgeRule`` to buffers: which in-image pixels a rectangle's values come from,
/// and a buffer with the rule's values filled in beyond the image.
enum EdgeExtension {
    /// The in-image coordinates that the coordinates `start ..< end` take their values from,
    /// as one interval (`nil` when all of them are transparent).
    static func sourceInterval(_ start: Int, _ end: Int, length: Int, rule: EdgeRule) -> Range<Int>? {
        if start >= 0 && end <= length { return start..<end }
        var lo = Int.max, hi = Int.min
        if rule == .mirror && end - start > 2 * length {
            return 0..<length
        }
        for c in start..<end {
            if let s = rule.sourceCoordinate(c, length: length) {
                lo = min(lo, s)
                hi = max(hi, s)
            }
        }
        return lo <= hi ? lo..<(hi + 1) : nil
    }

    /// The rectangle of `image` whose pixels supply the values of `region` under `rule`, or an
    /// empty rectangle when every value is transparent.
    static func sourceRect(of region: Rect, image: Rect, rule: EdgeRule) -> Rect {
        guard
            let xs = sourceInterval(region.x - image.x, region.maxX - image.x, length: image.width, rule: rule),
            let ys = sourceInterval(region.y - image.y, region.maxY - image.y, length: image.height, rule: rule)
        else { return Rect(x: image.x, y: image.y, width: 0, height: 0) }
        return Rect(x: image.x + xs.lowerBound, y: image.y + ys.lowerBound, width: xs.count, height: ys.count)
    }

    /// The values of `region` under `rule`, where `source` holds the pixels of `image` that
    /// ``sourceRect(of:image:rule:)`` names. Returns a view of `source` when no pixel of
    /// `region` lies outside the image.
    static func extend(_ source: PixelBuffer, image: Rect, to region: Rect, rule: EdgeRule) -> PixelBuffer {
        if image.contains(region) && source.rect.contains(region) { return source.view(region) }
        let result = PixelBuffer(rect: region)
        let columns = (region.x..<region.maxX).map {
            rule.sourceCoordinate($0 - image.x, length: image.width).map { $0 + image.x }
        }
        // The run of columns that map to themselves is copied whole; the rest pixel by pixel.
        let inside = region.intersection(Rect(x: image.x, y: region.y, width: image.width, height: region.height))
        let channels = PixelBuffer.channels
        source.withUnsafePixels { src in
            result.withUnsafePixels { dst in
                for y in region.y..<region.maxY {
                    guard let sy = rule.sourceCoordinate(y - image.y, length: image.height).map({ $0 + image.y })
                    else { continue }  // a transparent row: the new buffer is zeroed already
                    let from = src + (sy - source.rect.y) * source.rowStride
                    let to = dst + (y - region.y) * result.rowStride
                    if !inside.isEmpty {
                        (to + (inside.x - region.x) * channels).update(
                            from: from + (inside.x - source.rect.x) * channels, count: inside.width * channels)
                    }
                    for (i, sx) in columns.enumerated() {
                        guard let sx, !(inside.x..<inside.maxX).contains(region.x + i) else { continue }
                        (to + i * channels).update(from: from + (sx - source.rect.x) * channels, count: channels)
                    }
                }
            }
        }
        return result
    }
}
