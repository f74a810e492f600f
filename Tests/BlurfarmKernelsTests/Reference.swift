import BlurfarmCore
import BlurfarmKernels
import Foundation

/// Obvious double-precision implementations of the filter definitions, to check the kernels.
enum Reference {
    /// The input value at `(x, y)` under `edge` (transparent black where the rule says so).
    static func sample(_ image: PixelBuffer, _ x: Int, _ y: Int, edge: EdgeRule) -> SIMD4<Double> {
        let r = image.rect
        guard let sx = edge.sourceCoordinate(x - r.x, length: r.width),
            let sy = edge.sourceCoordinate(y - r.y, length: r.height)
        else { return .zero }
        let p = image[sx + r.x, sy + r.y]
        return SIMD4(Double(p[0]), Double(p[1]), Double(p[2]), Double(p[3]))
    }

    /// The 2-D Gaussian of the definition, written out again here rather than taken from
    /// `GaussianMask`: w_k = exp(−k²/2σ²) for k = −R…R, R = ceil(3σ), normalised; then
    /// Σ_i Σ_j w_i w_j in(x + i, y + j), in doubles.
    static func gaussian(_ image: PixelBuffer, sigma: Double, edge: EdgeRule) -> [SIMD4<Double>] {
        let r = Int((3 * sigma).rounded(.up))
        let raw = (-r...r).map { k in exp(-Double(k * k) / (2 * sigma * sigma)) }
        let total = raw.reduce(0, +)
        let w = raw.map { $0 / total }
        let out = edge == .grow ? image.rect.grown(dx: r, dy: r) : image.rect
        var result: [SIMD4<Double>] = []
        for y in out.y..<out.maxY {
            for x in out.x..<out.maxX {
                var acc = SIMD4<Double>.zero
                for j in -r...r {
                    for i in -r...r {
                        acc += w[i + r] * w[j + r] * sample(image, x + i, y + j, edge: edge)
                    }
                }
                result.append(acc)
            }
        }
        return result
    }

    /// Motion blur by its definition: the mean of 2n+1 bilinear samples at p − v + k·v/n.
    static func motion(_ image: PixelBuffer, radius: Double, angle: Double, samples n: Int, edge: EdgeRule)
        -> [SIMD4<Double>]
    {
        let (c, s) = MotionMask.cosineAndSine(degrees: angle)
        let vx = radius * c, vy = -radius * s
        let out = image.rect
        var result: [SIMD4<Double>] = []
        for y in out.y..<out.maxY {
            for x in out.x..<out.maxX {
                var acc = SIMD4<Double>.zero
                for k in 0...(2 * n) {
                    let t = Double(k) / Double(n)
                    let sx = Double(x) - vx + t * vx, sy = Double(y) - vy + t * vy
                    let x0 = sx.rounded(.down), y0 = sy.rounded(.down)
                    let fx = sx - x0, fy = sy - y0
                    let ix = Int(x0), iy = Int(y0)
                    acc += (1 - fx) * (1 - fy) * sample(image, ix, iy, edge: edge)
                    acc += fx * (1 - fy) * sample(image, ix + 1, iy, edge: edge)
                    acc += (1 - fx) * fy * sample(image, ix, iy + 1, edge: edge)
                    acc += fx * fy * sample(image, ix + 1, iy + 1, edge: edge)
                }
                result.append(acc / Double(2 * n + 1))
            }
        }
        return result
    }

    /// The largest difference, in levels of `maxLevel` (255 or 65535), between the kernel's
    /// output and the reference after both are unpremultiplied and rounded as outputs are.
    static func maxLevelDifference(_ output: PixelBuffer, _ reference: [SIMD4<Double>], maxLevel: Double)
        -> (levels: Int, x: Int, y: Int)
    {
        var worst = (levels: 0, x: 0, y: 0)
        var i = 0
        for y in output.rect.y..<output.rect.maxY {
            for x in output.rect.x..<output.rect.maxX {
                let p = output[x, y], q = reference[i]
                i += 1
                let pa = Double(p[3]), qa = q[3]
                for c in 0..<4 {
                    let pv = c == 3 ? pa : (pa > 0 ? Double(p[c]) / pa : 0)
                    let qv = c == 3 ? qa : (qa > 0 ? q[c] / qa : 0)
                    let pl = (min(max(pv, 0), 1) * maxLevel).rounded()
                    let ql = (min(max(qv, 0), 1) * maxLevel).rounded()
                    // Unpremultiplying a nearly transparent pixel magnifies any error; compare
                    // colour only where the pixel would be visible at this depth.
                    if c < 3 && qa * maxLevel < 1 { continue }
                    let d = Int(abs(pl - ql))
                    if d > worst.levels { worst = (d, x, y) }
                }
            }
        }
        return worst
    }
}

extension Reference {
    /// `frost` by its definition (docs/filters.md), in doubles: the Gaussian (separable: the 2-D
    /// mask is the product of the 1-D one, w_k = exp(−k²/2σ²), k = −R…R, R = ceil(3σ),
    /// normalised), then per premultiplied pixel the Rec. 709 saturation clamped to [0, a], then
    /// the tint (straight sRGB values and alpha) source-over.
    static func frost(
        _ image: PixelBuffer, sigma: Double, saturation s: Double, tint: SIMD4<Double>, edge: EdgeRule
    ) -> [SIMD4<Double>] {
        let r = Int((3 * sigma).rounded(.up))
        let raw = (-r...r).map { k in exp(-Double(k * k) / (2 * sigma * sigma)) }
        let total = raw.reduce(0, +)
        let w = raw.map { $0 / total }
        let rect = image.rect
        // Columns pass over rows -r ..< height + r, then rows pass.
        var columns = [[SIMD4<Double>]](repeating: [], count: rect.height)
        for y in 0..<rect.height {
            columns[y] = (-r..<(rect.width + r)).map { x in
                var acc = SIMD4<Double>.zero
                for j in -r...r { acc += w[j + r] * sample(image, rect.x + x, rect.y + y + j, edge: edge) }
                return acc
            }
        }
        var result: [SIMD4<Double>] = []
        for y in 0..<rect.height {
            for x in 0..<rect.width {
                var p = SIMD4<Double>.zero
                for i in -r...r { p += w[i + r] * columns[y][x + r + i] }
                let a = image.channels == 4 ? p[3] : 1
                let l = 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2]
                var out = SIMD4<Double>(0, 0, 0, tint[3] + (1 - tint[3]) * a)
                for c in 0..<3 {
                    let saturated = min(max(l + s * (p[c] - l), 0), a)
                    out[c] = tint[3] * tint[c] + (1 - tint[3]) * saturated
                }
                result.append(out)
            }
        }
        return result
    }
}

extension Reference {
    /// The exact sRGB transfer functions, in doubles.
    static func toLinear(_ c: Double) -> Double { c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4) }
    static func toEncoded(_ l: Double) -> Double { l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1 / 2.4) - 0.055 }

    /// A straight sRGB colour (red, green, blue, alpha) with its colour in linear light.
    static func linearised(_ colour: SIMD4<Double>) -> SIMD4<Double> {
        SIMD4(toLinear(colour[0]), toLinear(colour[1]), toLinear(colour[2]), colour[3])
    }

    /// A premultiplied image with its colour in linear light (unpremultiplied, converted,
    /// premultiplied again), as the `linear` colour mode works.
    static func linearised(_ image: PixelBuffer) -> PixelBuffer {
        let result = PixelBuffer(rect: image.rect, channels: image.channels)
        for y in image.rect.y..<image.rect.maxY {
            for x in image.rect.x..<image.rect.maxX {
                let p = image[x, y]
                let a = Double(p[3])
                var q = p
                for c in 0..<3 where a > 0 { q[c] = Float(toLinear(Double(p[c]) / a) * a) }
                result[x, y] = q
            }
        }
        return result
    }

    /// A premultiplied pixel in linear light back to sRGB-encoded values.
    static func encoded(_ p: SIMD4<Double>) -> SIMD4<Double> {
        let a = p[3]
        guard a > 0 else { return .zero }
        return SIMD4(toEncoded(p[0] / a) * a, toEncoded(p[1] / a) * a, toEncoded(p[2] / a) * a, a)
    }
}
