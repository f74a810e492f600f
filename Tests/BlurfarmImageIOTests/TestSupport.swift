import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// A fresh folder under the system's temporary folder, removed by `remove()`.
struct ScratchFolder {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "blurfarm-io-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// Names in the folder, hidden ones included, sorted.
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// The `ImageIOError` that `body` throws, or nil when it returns. Any other error is a test
/// failure.
func failure<T>(_ body: () throws -> T, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> ImageIOError? {
    do {
        _ = try body()
        return nil
    } catch let error as ImageIOError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Every sample of the buffer, row by row, RGBA.
func samples(_ buffer: PixelBuffer) -> [Float] {
    var out: [Float] = []
    out.reserveCapacity(buffer.rect.area * 4)
    for y in buffer.rect.y..<buffer.rect.maxY {
        for x in buffer.rect.x..<buffer.rect.maxX {
            let p = buffer[x, y]
            out.append(contentsOf: [p.x, p.y, p.z, p.w])
        }
    }
    return out
}

/// Peak signal-to-noise ratio in dB over the colour channels of two same-sized buffers.
func psnr(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
    precondition(a.rect == b.rect)
    var squares = 0.0
    var count = 0
    for y in a.rect.y..<a.rect.maxY {
        for x in a.rect.x..<a.rect.maxX {
            let p = a[x, y], q = b[x, y]
            for c in 0..<3 {
                let d = Double(p[c] - q[c])
                squares += d * d
                count += 1
            }
        }
    }
    let mse = squares / Double(count)
    return mse == 0 ? .infinity : 10 * log10(1 / mse)
}

/// A `width`×`height` buffer filled by `pixel(x, y)`.
func makeBuffer(width: Int, height: Int, _ pixel: (Int, Int) -> SIMD4<Float>) -> PixelBuffer {
    let buffer = PixelBuffer(rect: Rect(width: width, height: height))
    for y in 0..<height {
        for x in 0..<width { buffer[x, y] = pixel(x, y) }
    }
    return buffer
}
