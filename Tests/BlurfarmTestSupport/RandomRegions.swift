import BlurfarmCore

/// One to four random regions over a `width` × `height` image, from `seed`: rectangles (some
/// rounded) and ellipses in pixels or percent, some reaching beyond the image, some
/// overlapping, feathers from none to wider than the shape; inverted a quarter of the time.
public func randomRegionMask(width: Int, height: Int, seed: UInt64) -> RegionMask {
    var rng = SplitMix(seed: seed)
    func length(_ extent: Int, size: Bool) -> RegionLength {
        let low = size ? 0.5 : -0.3 * Double(extent) - 2
        let high = size ? 1.2 * Double(extent) + 2 : 1.1 * Double(extent)
        let pixels = Double.random(in: low...high, using: &rng)
        let whole = rng.next() % 2 == 0
        if rng.next() % 3 == 0 {
            let percent = pixels * 100 / Double(max(extent, 1))
            return .percent(whole ? max(percent.rounded(), size ? 1 : -100) : percent)
        }
        return .pixels(whole ? max(pixels.rounded(), size ? 1 : -1000) : pixels)
    }
    var regions: [Region] = []
    for _ in 0...(rng.next() % 4) {
        let shape: Region.Shape = rng.next() % 3 == 0 ? .ellipse : .rect
        let feathers: [Double] = [0, 0, 1, 2.5, Double.random(in: 0...12, using: &rng)]
        regions.append(Region(
            shape: shape, x: length(width, size: false), y: length(height, size: false), width: length(width, size: true),
            height: length(height, size: true),
            cornerRadius: shape == .rect && rng.next() % 2 == 0 ? Double.random(in: 0...20, using: &rng) : 0,
            feather: feathers[Int(rng.next() % UInt64(feathers.count))]))
    }
    return RegionMask(regions: regions, invert: rng.next() % 4 == 0)
}
