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

    /// The values of `region` under `rule`, with `channels` channels, where `source` holds the
    /// pixels of `image` that ``sourceRect(of:image:rule:)`` names. Returns a view of `source`
    /// when no pixel of `region` lies outside the image and the channels agree; an opaque
    /// (3-channel) source gives alpha 1 to a 4-channel result.
    static func extend(
        _ source: PixelBuffer, image: Rect, to region: Rect, rule: EdgeRule, channels: Int
    ) -> PixelBuffer {
        precondition(channels >= source.channels, "extending drops no channel")
        if image.contains(region) && source.rect.contains(region) && source.channels == channels {
            return source.view(region)
        }
        let result = PixelBuffer(rect: region, channels: channels)
        let columns = (region.x..<region.maxX).map {
            rule.sourceCoordinate($0 - image.x, length: image.width).map { $0 + image.x }
        }
        let from = source.channels, to = channels
        // The run of columns that map to themselves is copied whole when the channels agree;
        // the rest pixel by pixel.
        let inside = from == to
            ? region.intersection(Rect(x: image.x, y: region.y, width: image.width, height: region.height))
            : Rect(x: region.x, y: region.y, width: 0, height: 0)
        source.withUnsafePixels { src in
            result.withUnsafePixels { dst in
                for y in region.y..<region.maxY {
                    guard let sy = rule.sourceCoordinate(y - image.y, length: image.height).map({ $0 + image.y })
                    else { continue }  // a transparent row: the new buffer is zeroed already
                    let row = src + (sy - source.rect.y) * source.rowStride
                    let out = dst + (y - region.y) * result.rowStride
                    if !inside.isEmpty {
                        (out + (inside.x - region.x) * to).update(
                            from: row + (inside.x - source.rect.x) * from, count: inside.width * to)
                    }
                    for (i, sx) in columns.enumerated() {
                        guard let sx, !(inside.x..<inside.maxX).contains(region.x + i) else { continue }
                        let o = out + i * to, s = row + (sx - source.rect.x) * from
                        o.update(from: s, count: from)
                        if to > from { o[3] = 1 }
                    }
                }
            }
        }
        return result
    }
}
