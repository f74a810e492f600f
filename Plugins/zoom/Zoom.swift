// zoom: Core Image's CIZoomBlur as a blurfarm plugin written in Swift, a template to copy
// (docs/plugins.md). The entry point is a `@_cdecl` function returning a table built once;
// the functions in the table are closures that capture nothing, so they are C function
// pointers.
//
// The filter (docs/plugins.md, "zoom"): with c the centre and a = amount / 100, the pixel
// whose centre is p is the mean of n + 1 samples at p + (k / n) * a * (c - p), k = 0...n, each
// read with bilinear interpolation, where n = ceil(a * |c - p|) (one sample per pixel of
// streak, so nothing ghosts), at least 1 and at most `maximumSamples`. The streak points
// towards the centre and grows with the distance from it, so the region of interest of a tile
// depends on where the tile lies: the farther from the centre, the longer its reach.
import BlurfarmPluginABI

/// Longest streak sampled one sample per pixel; longer ones (more than this many pixels) are
/// sampled this many times. A policy: 512 samples keep a 4K image's corners under a second
/// per megapixel on one core.
let maximumSamples = 512

/// Parameter indices, in declaration order (the order of `values`).
enum Parameter: Int {
    case amount, centreX, centreY
}

/// The centre in pixel-centre coordinates (pixel (x, y) has its centre at (x + 0.5, y + 0.5))
/// and the fraction of the way towards it that the streak spans.
struct Zoom {
    let centreX: Double
    let centreY: Double
    let fraction: Double

    init(_ values: UnsafePointer<Double>, image: blurfarm_rect) {
        fraction = values[Parameter.amount.rawValue] / 100
        centreX = Double(image.x) + values[Parameter.centreX.rawValue] * Double(image.width)
        centreY = Double(image.y) + values[Parameter.centreY.rawValue] * Double(image.height)
    }

    /// The rectangle holding every sample of the pixels of `output`, with the bilinear
    /// neighbours and one pixel to spare for rounding. The samples of a pixel lie between it
    /// and the same pixel moved `fraction` of the way to the centre; for a rectangle, between
    /// it and the rectangle moved so.
    func regionOfInterest(_ output: blurfarm_rect) -> blurfarm_rect {
        func span(_ start: Int64, _ count: Int64, centre: Double) -> (Int64, Int64) {
            let first = Double(start) + 0.5, last = Double(start + count - 1) + 0.5
            let low = min(first, first + fraction * (centre - first))
            let high = max(last, last + fraction * (centre - last))
            // Sample position s reads pixels floor(s - 0.5) and the one after it.
            let lower = Int64((low - 0.5).rounded(.down)) - 1
            let upper = Int64((high - 0.5).rounded(.down)) + 2
            return (lower, upper - lower + 1)
        }
        if output.width <= 0 || output.height <= 0 { return output }
        let (x, width) = span(output.x, output.width, centre: centreX)
        let (y, height) = span(output.y, output.height, centre: centreY)
        return blurfarm_rect(x: x, y: y, width: width, height: height)
    }

    /// The pixels whose samples can reach `input`: a sample at q comes from the pixel at
    /// (q - fraction * c) / (1 - fraction), so `input` moved away from the centre by that.
    func domainOfDefinition(_ input: blurfarm_rect) -> blurfarm_rect {
        func span(_ start: Int64, _ count: Int64, centre: Double) -> (Int64, Int64) {
            let low = Double(start) - 1, high = Double(start + count) + 1
            let back = { (q: Double) in (q - self.fraction * centre) / (1 - self.fraction) }
            let lower = Int64(min(low, back(low)).rounded(.down)) - 1
            let upper = Int64(max(high, back(high)).rounded(.up)) + 1
            return (lower, upper - lower)
        }
        if input.width <= 0 || input.height <= 0 { return input }
        let (x, width) = span(input.x, input.width, centre: centreX)
        let (y, height) = span(input.y, input.height, centre: centreY)
        return blurfarm_rect(x: x, y: y, width: width, height: height)
    }

    /// Computes every pixel of `output` from `input`.
    func run(input: blurfarm_buffer, output: blurfarm_buffer) {
        let source = input.data!, target = output.data!
        let inputRect = input.rect, rect = output.rect
        let stride = Int(input.row_stride)
        /// The input pixel at image coordinates (x, y), as a pointer to its 4 floats.
        func pixel(_ x: Int64, _ y: Int64) -> UnsafeMutablePointer<Float> {
            source + Int(y - inputRect.y) * stride + Int(x - inputRect.x) * 4
        }
        for y in rect.y..<(rect.y + rect.height) {
            var out = target + Int(y - rect.y) * Int(output.row_stride)
            for x in rect.x..<(rect.x + rect.width) {
                let px = Double(x) + 0.5, py = Double(y) + 0.5
                let dx = fraction * (centreX - px), dy = fraction * (centreY - py)
                let length = (dx * dx + dy * dy).squareRoot()
                let n = max(1, min(maximumSamples, Int(length.rounded(.up))))
                var sum = SIMD4<Float>(repeating: 0)
                for k in 0...n {
                    let t = Double(k) / Double(n)
                    let sx = px + t * dx - 0.5, sy = py + t * dy - 0.5
                    let x0 = sx.rounded(.down), y0 = sy.rounded(.down)
                    let fx = Float(sx - x0), fy = Float(sy - y0)
                    let ix = Int64(x0), iy = Int64(y0)
                    let top = pixel(ix, iy), bottom = pixel(ix, iy + 1)
                    let a = SIMD4(top[0], top[1], top[2], top[3]), b = SIMD4(top[4], top[5], top[6], top[7])
                    let c = SIMD4(bottom[0], bottom[1], bottom[2], bottom[3])
                    let d = SIMD4(bottom[4], bottom[5], bottom[6], bottom[7])
                    let upper = a + (b - a) * fx, lower = c + (d - c) * fx
                    sum += upper + (lower - upper) * fy
                }
                let mean = sum / Float(n + 1)
                out[0] = mean[0]
                out[1] = mean[1]
                out[2] = mean[2]
                out[3] = mean[3]
                out += 4
            }
        }
    }
}

/// A C string that lives as long as the library: the bytes of a string literal.
func cString(_ text: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// Writes `text` into the host's message buffer, cut to fit, NUL-terminated.
func write(_ text: String, to message: UnsafeMutablePointer<CChar>?, size: Int) {
    guard let message, size > 0 else { return }
    let bytes = Array(text.utf8.prefix(size - 1))
    for (i, byte) in bytes.enumerated() { message[i] = CChar(bitPattern: byte) }
    message[bytes.count] = 0
}

func parameter(
    _ name: StaticString, _ description: StaticString, default value: Double, minimum: Double, maximum: Double
) -> blurfarm_parameter {
    blurfarm_parameter(
        name: cString(name), description: cString(description), type: BLURFARM_PARAMETER_NUMBER.rawValue, flags: 0,
        default_value: value, minimum: minimum, maximum: maximum, reserved: (0, 0, 0, 0))
}

/// The parameters, in the order of ``Parameter``.
nonisolated(unsafe) let parameters: UnsafeMutablePointer<blurfarm_parameter> = {
    let list = [
        // At most 50 (a policy): the domain of definition grows with 1 / (1 - a), so under the
        // grow edge rule a zoom at most doubles the image's side.
        parameter(
            "amount", "how far the streaks reach: percent of the way from each pixel to the centre",
            default: 20, minimum: 0, maximum: 50),
        parameter(
            "centre-x", "the centre's x as a fraction of the image width (0 left edge, 1 right edge)",
            default: 0.5, minimum: 0, maximum: 1),
        parameter(
            "centre-y", "the centre's y as a fraction of the image height (0 top edge, 1 bottom edge)",
            default: 0.5, minimum: 0, maximum: 1),
    ]
    let memory = UnsafeMutablePointer<blurfarm_parameter>.allocate(capacity: list.count)
    memory.initialize(from: list, count: list.count)
    return memory
}()

/// The table: built on the first call of the entry point, never freed.
nonisolated(unsafe) let table: UnsafeMutablePointer<blurfarm_plugin> = {
    let memory = UnsafeMutablePointer<blurfarm_plugin>.allocate(capacity: 1)
    memory.initialize(to: blurfarm_plugin(
        abi_version: BLURFARM_PLUGIN_ABI_VERSION, flags: 0, name: cString("zoom"),
        description: cString("zoom blur (Core Image's CIZoomBlur): streaks towards a centre, longer farther from it"),
        parameters: UnsafePointer(parameters), parameter_count: 3, reserved0: 0,
        region_of_interest: { values, output, image, input in
            guard let values, let output, let image, let input else { return BLURFARM_ERROR_INVALID_ARGUMENT }
            input.pointee = Zoom(values, image: image.pointee).regionOfInterest(output.pointee)
            return BLURFARM_OK
        },
        domain_of_definition: { values, input, image, output in
            guard let values, let input, let image, let output else { return BLURFARM_ERROR_INVALID_ARGUMENT }
            output.pointee = Zoom(values, image: image.pointee).domainOfDefinition(input.pointee)
            return BLURFARM_OK
        },
        run: { values, input, output, image, message, messageSize in
            guard let values, let input, let output, let image else { return BLURFARM_ERROR_INVALID_ARGUMENT }
            guard input.pointee.channels == 4, output.pointee.channels == 4 else {
                write("zoom works on 4 channels, not \(input.pointee.channels)", to: message, size: messageSize)
                return BLURFARM_ERROR_UNSUPPORTED
            }
            let zoom = Zoom(values, image: image.pointee)
            let needed = zoom.regionOfInterest(output.pointee.rect), held = input.pointee.rect
            guard held.x <= needed.x, held.y <= needed.y, held.x + held.width >= needed.x + needed.width,
                held.y + held.height >= needed.y + needed.height
            else {
                write("the input does not hold the region of interest", to: message, size: messageSize)
                return BLURFARM_ERROR_INVALID_ARGUMENT
            }
            zoom.run(input: input.pointee, output: output.pointee)
            return BLURFARM_OK
        },
        reserved: (nil, nil, nil, nil, nil, nil, nil, nil)))
    return memory
}()

/// The entry point blurfarm looks up.
@_cdecl("blurfarm_plugin_entry")
public func blurfarmPluginEntry() -> UnsafePointer<blurfarm_plugin> {
    UnsafePointer(table)
}
