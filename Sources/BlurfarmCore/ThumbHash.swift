import Foundation

/// ThumbHash (Evan Wallace, 2023: the published algorithm of evanw/thumbhash): a placeholder
/// of an image in about 25 bytes. The image, at most 100 × 100 pixels, is turned into
/// luminance, two colour-difference channels (yellow–blue, red–green) and alpha, and each is
/// kept as the lowest terms of its discrete cosine transform: the average (DC) and a triangle
/// of varying (AC) terms, 4 bits each, scaled by the largest. Decoding sums the same cosines
/// over a 32-pixel image, so the placeholder is smooth by construction, keeps the average
/// colour, and the aspect ratio approximately.
///
/// Chosen over BlurHash for the output map (docs/json.md): it keeps alpha and the aspect
/// ratio, spends its bits on luminance, needs no parameters (BlurHash asks for a component
/// count per axis), and decodes in a few lines of JavaScript; its bytes are byte-for-byte
/// those of the reference `rgbaToThumbHash` (checked against its output in ThumbHashTests).
///
/// Pure code: no I/O, no libvips; the pixels come from a shrink-on-load thumbnail.
public enum ThumbHash {
    /// The largest side an encoded image may have, in pixels: a larger one takes longer and
    /// gives the same terms (the reference refuses it too).
    public static let maximumSide = 100

    /// The longer side of a decoded placeholder, in pixels (the reference's).
    public static let decodedSide = 32

    /// The ThumbHash of a `width` × `height` image whose `rgba` holds 8-bit red, green, blue
    /// and alpha per pixel, row by row, colour not premultiplied by alpha.
    /// - Precondition: both sides in 1...``maximumSide`` and `rgba.count == width * height * 4`.
    public static func encode(width: Int, height: Int, rgba: [UInt8]) -> [UInt8] {
        precondition((1...maximumSide).contains(width) && (1...maximumSide).contains(height), "\(width)x\(height) doesn't fit in 100x100")
        precondition(rgba.count == width * height * 4, "\(rgba.count) samples for \(width)x\(height) RGBA")
        let count = width * height

        // The average colour, weighted by alpha: what transparent pixels are composited over.
        var average = SIMD4<Double>(0, 0, 0, 0)
        for i in 0..<count {
            let alpha = Double(rgba[4 * i + 3]) / 255
            average.x += alpha / 255 * Double(rgba[4 * i])
            average.y += alpha / 255 * Double(rgba[4 * i + 1])
            average.z += alpha / 255 * Double(rgba[4 * i + 2])
            average.w += alpha
        }
        if average.w > 0 {
            average.x /= average.w
            average.y /= average.w
            average.z /= average.w
        }
        let hasAlpha = average.w < Double(count)
        // Fewer luminance terms when alpha takes some of the bits.
        let luminanceLimit = Double(hasAlpha ? 5 : 7)
        let longer = Double(max(width, height))
        let lx = max(1, quantize(luminanceLimit * Double(width) / longer))
        let ly = max(1, quantize(luminanceLimit * Double(height) / longer))

        var l = [Double](repeating: 0, count: count), p = l, q = l, a = l
        for i in 0..<count {
            let alpha = Double(rgba[4 * i + 3]) / 255
            let r = average.x * (1 - alpha) + alpha / 255 * Double(rgba[4 * i])
            let g = average.y * (1 - alpha) + alpha / 255 * Double(rgba[4 * i + 1])
            let b = average.z * (1 - alpha) + alpha / 255 * Double(rgba[4 * i + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }

        let luminance = Channel(encoding: l, width: width, height: height, nx: max(3, lx), ny: max(3, ly))
        let yellowBlue = Channel(encoding: p, width: width, height: height, nx: 3, ny: 3)
        let redGreen = Channel(encoding: q, width: width, height: height, nx: 3, ny: 3)
        let opacity = hasAlpha ? Channel(encoding: a, width: width, height: height, nx: 5, ny: 5) : nil

        let isLandscape = width > height
        let header24 =
            quantize(63 * luminance.dc) | quantize(31.5 + 31.5 * yellowBlue.dc) << 6 | quantize(31.5 + 31.5 * redGreen.dc) << 12
            | quantize(31 * luminance.scale) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            (isLandscape ? ly : lx) | quantize(63 * yellowBlue.scale) << 3 | quantize(63 * redGreen.scale) << 9
            | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8(header24 >> 8 & 255), UInt8(header24 >> 16), UInt8(header16 & 255),
            UInt8(header16 >> 8),
        ]
        if let opacity { hash.append(UInt8(quantize(15 * opacity.dc) | quantize(15 * opacity.scale) << 4)) }
        // The AC terms, two to a byte, low nibble first.
        let terms = [luminance, yellowBlue, redGreen].flatMap(\.ac) + (opacity?.ac ?? [])
        for (index, term) in terms.enumerated() {
            if index % 2 == 0 { hash.append(0) }
            hash[hash.count - 1] |= UInt8(quantize(15 * term) << (index % 2 * 4))
        }
        return hash
    }

    /// The placeholder `hash` stands for: `longerSide` pixels on its longer side (the
    /// reference's ``decodedSide`` unless said), the other side from the approximate aspect
    /// ratio, 8-bit RGBA row by row (colour not premultiplied), with the reference's saturation
    /// boost. nil when `hash` is too short for what its header says it holds.
    public static func decode(_ hash: [UInt8], longerSide: Int = decodedSide) -> (width: Int, height: Int, rgba: [UInt8])? {
        guard hash.count >= 5 else { return nil }
        let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
        let header16 = Int(hash[3]) | Int(hash[4]) << 8
        let lDC = Double(header24 & 63) / 63
        let pDC = Double(header24 >> 6 & 63) / 31.5 - 1
        let qDC = Double(header24 >> 12 & 63) / 31.5 - 1
        let lScale = Double(header24 >> 18 & 31) / 31
        let hasAlpha = header24 >> 23 != 0
        let pScale = Double(header16 >> 3 & 63) / 63
        let qScale = Double(header16 >> 9 & 63) / 63
        let isLandscape = header16 >> 15 != 0
        let (shortSide, longSide) = (header16 & 7, hasAlpha ? 5 : 7)
        guard shortSide > 0 else { return nil }  // never encoded: a side has at least one term
        let lx = max(3, isLandscape ? longSide : shortSide)
        let ly = max(3, isLandscape ? shortSide : longSide)
        if hasAlpha, hash.count < 6 { return nil }
        let aDC = hasAlpha ? Double(hash[5] & 15) / 15 : 1
        let aScale = hasAlpha ? Double(hash[5] >> 4) / 15 : 0

        var nibbles = NibbleReader(hash: hash, start: hasAlpha ? 6 : 5)
        // The colour terms are boosted by 1.25, against the saturation quantization takes away.
        guard let lAC = nibbles.terms(nx: lx, ny: ly, scale: lScale),
            let pAC = nibbles.terms(nx: 3, ny: 3, scale: pScale * 1.25),
            let qAC = nibbles.terms(nx: 3, ny: 3, scale: qScale * 1.25)
        else { return nil }
        let aAC: [Double]
        if hasAlpha {
            guard let terms = nibbles.terms(nx: 5, ny: 5, scale: aScale) else { return nil }
            aAC = terms
        } else {
            aAC = []
        }

        let ratio = Double(isLandscape ? longSide : shortSide) / Double(isLandscape ? shortSide : longSide)
        let side = Double(longerSide)
        let width = quantize(ratio > 1 ? side : side * ratio)
        let height = quantize(ratio > 1 ? side / ratio : side)
        guard width > 0, height > 0 else { return nil }
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        let columns = max(lx, hasAlpha ? 5 : 3), rows = max(ly, hasAlpha ? 5 : 3)
        var fx = [Double](repeating: 0, count: columns), fy = [Double](repeating: 0, count: rows)
        for y in 0..<height {
            for cy in 0..<rows { fy[cy] = cos(Double.pi / Double(height) * (Double(y) + 0.5) * Double(cy)) }
            for x in 0..<width {
                for cx in 0..<columns { fx[cx] = cos(Double.pi / Double(width) * (Double(x) + 0.5) * Double(cx)) }
                let l = sum(lAC, nx: lx, ny: ly, fx: fx, fy: fy, from: lDC)
                let p = sum(pAC, nx: 3, ny: 3, fx: fx, fy: fy, from: pDC, cosinesFirst: true)
                let q = sum(qAC, nx: 3, ny: 3, fx: fx, fy: fy, from: qDC, cosinesFirst: true)
                let a = hasAlpha ? sum(aAC, nx: 5, ny: 5, fx: fx, fy: fy, from: aDC) : aDC
                let b = l - 2.0 / 3.0 * p
                let r = (3 * l - b + q) / 2
                let g = r - q
                let i = (y * width + x) * 4
                // Truncated, as the reference stores them (into a Uint8Array).
                for (k, value) in [r, g, b, a].enumerated() { rgba[i + k] = UInt8(max(0, 255 * min(1, value))) }
            }
        }
        return (width, height, rgba)
    }

    /// The terms of one channel: its average (DC), its varying terms (AC) mapped to 0...1 by
    /// the largest of them, and that largest (the scale).
    private struct Channel {
        var dc = 0.0
        var ac: [Double] = []
        var scale = 0.0

        /// The DCT of `values` (a `width` × `height` channel), terms (cx, cy) in the triangle
        /// `cx * ny < nx * (ny - cy)`, row by row.
        init(encoding values: [Double], width: Int, height: Int, nx: Int, ny: Int) {
            var fx = [Double](repeating: 0, count: width)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    for x in 0..<width { fx[x] = cos(Double.pi / Double(width) * Double(cx) * (Double(x) + 0.5)) }
                    var f = 0.0
                    for y in 0..<height {
                        let fy = cos(Double.pi / Double(height) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<width { f += values[x + y * width] * fx[x] * fy }
                    }
                    f /= Double(width * height)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
        }
    }

    /// Reads the 4-bit AC terms of a hash, low nibble first.
    private struct NibbleReader {
        let hash: [UInt8]
        let start: Int
        var index = 0

        init(hash: [UInt8], start: Int) {
            self.hash = hash
            self.start = start
        }

        /// The terms of an `nx` × `ny` triangle (DC left out), each in -1...1 times `scale`;
        /// nil when the hash ends first.
        mutating func terms(nx: Int, ny: Int, scale: Double) -> [Double]? {
            var terms: [Double] = []
            for cy in 0..<ny {
                var cx = cy > 0 ? 0 : 1
                while cx * ny < nx * (ny - cy) {
                    let byte = start + index / 2
                    guard byte < hash.count else { return nil }
                    let nibble = hash[byte] >> (index % 2 * 4) & 15
                    terms.append((Double(nibble) / 7.5 - 1) * scale)
                    index += 1
                    cx += 1
                }
            }
            return terms
        }
    }

    /// One channel at a pixel whose cosines are `fx`, `fy`: `dc` plus the terms of the
    /// `nx` × `ny` triangle in the order they were read, each times its two cosines, added in
    /// the reference's order and grouping (`cosinesFirst`: the cosines multiplied together
    /// first, as it does for the colour channels) so that the bytes come out the same.
    private static func sum(
        _ terms: [Double], nx: Int, ny: Int, fx: [Double], fy: [Double], from dc: Double, cosinesFirst: Bool = false
    ) -> Double {
        var total = dc
        var j = 0
        for cy in 0..<ny {
            var cx = cy > 0 ? 0 : 1
            let fy2 = fy[cy] * 2
            while cx * ny < nx * (ny - cy) {
                total += cosinesFirst ? terms[j] * (fx[cx] * fy2) : terms[j] * fx[cx] * fy2
                j += 1
                cx += 1
            }
        }
        return total
    }

    /// `value` rounded as JavaScript's `Math.round` does (halves up), as an integer.
    private static func quantize(_ value: Double) -> Int {
        Int((value + 0.5).rounded(.down))
    }
}
