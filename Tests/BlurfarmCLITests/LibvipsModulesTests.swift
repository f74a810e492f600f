import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// libvips's loadable modules (`vips-modules-8.14/`: HEIF/AVIF, JPEG XL, ImageMagick, PDF,
/// OpenSlide) are loaded on first need: a JPEG in and out loads none of them, a format only a
/// module reads (BMP, through ImageMagick) and an AVIF output load them and work. Seen by the
/// dynamic linker itself (`LD_DEBUG=files` names every library a process opens).
@Suite(.tags(.process), .blocking) struct LibvipsModulesTests {
    /// A 3 × 2 24-bit BMP, bottom row first, rows padded to 4 bytes: blue, green, red per pixel.
    static func bmp(_ rows: [[(UInt8, UInt8, UInt8)]]) -> Data {
        let width = rows[0].count, height = rows.count
        let rowBytes = (width * 3 + 3) / 4 * 4
        var data = Data()
        func le(_ value: Int, _ bytes: Int) { for i in 0..<bytes { data.append(UInt8((value >> (8 * i)) & 0xFF)) } }
        data.append(contentsOf: Array("BM".utf8))
        le(54 + rowBytes * height, 4); le(0, 4); le(54, 4)
        le(40, 4); le(width, 4); le(height, 4); le(1, 2); le(24, 2); le(0, 4); le(rowBytes * height, 4)
        le(2835, 4); le(2835, 4); le(0, 4); le(0, 4)
        for row in rows.reversed() {
            for (r, g, b) in row { data.append(contentsOf: [b, g, r]) }
            data.append(contentsOf: [UInt8](repeating: 0, count: rowBytes - width * 3))
        }
        return data
    }

    /// `blurfarm apply` with `arguments` under `LD_DEBUG=files` (written to files in `folder`,
    /// not standard error): its status, standard error, and whether it opened a module.
    static func apply(
        _ arguments: [String], in folder: URL
    ) throws -> (status: Int32, loadedModules: Bool, loadedLibvips: Bool, stderr: String) {
        let trace = folder.appendingPathComponent("ld-debug")
        let result = try Blurfarm.run(
            ["apply"] + arguments + ["--workers", "0"], environment: ["LD_DEBUG": "files", "LD_DEBUG_OUTPUT": trace.path])
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("ld-debug") }
        let opened = try files.map { try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }
        #expect(!opened.isEmpty, "LD_DEBUG_OUTPUT wrote nothing")
        return (
            result.status, opened.contains { $0.contains("vips-modules-") }, opened.contains { $0.contains("file=libvips.so.42") },
            result.stderr
        )
    }

    /// libvips itself is loaded on first use, not linked (docs/image-io.md, "libvips lifecycle"):
    /// a plain JPEG (no profile, upright) filtered to a JPEG never loads it; a PNG does.
    @Test func aPlainJPEGLoadsNoLibvipsAndAPNGDoes() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let jpeg = try Self.apply(
            [Fixtures.corpus("photos/mate-Aqua.jpg"), folder.appendingPathComponent("o.jpg").path, "--filter", "gaussian sigma=2"],
            in: folder)
        #expect(jpeg.status == 0, "\(jpeg.stderr.suffix(2000))")
        #expect(!jpeg.loadedLibvips)
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasPrefix("ld-debug") {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(file))
        }
        let png = try Self.apply(
            [Fixtures.corpus("special/deep-16bit.png"), folder.appendingPathComponent("o.png").path, "--filter", "gaussian sigma=2"],
            in: folder)
        #expect(png.status == 0, "\(png.stderr.suffix(2000))")
        #expect(png.loadedLibvips)
    }

    @Test func aJPEGInAndOutLoadsNoModule() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("o.jpg").path
        let run = try Self.apply([Fixtures.corpus("photos/plasma-Kite.jpg"), out, "--filter", "gaussian sigma=2"], in: folder)
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        #expect(!run.loadedModules)
        #expect(FileManager.default.fileExists(atPath: out))
    }

    @Test func aFormatOnlyAModuleReadsLoadsThemAndDecodes() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in.bmp")
        let rows: [[(UInt8, UInt8, UInt8)]] = [[(255, 0, 0), (0, 255, 0), (0, 0, 255)], [(10, 20, 30), (200, 100, 50), (0, 0, 0)]]
        try Self.bmp(rows).write(to: input)
        let out = folder.appendingPathComponent("o.png").path
        let run = try Self.apply([input.path, out], in: folder)
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        #expect(run.loadedModules)
        let decoded = try ImageReader.read(out).pixels
        #expect(decoded.rect == Rect(width: 3, height: 2))
        for (y, row) in rows.enumerated() {
            for (x, (r, g, b)) in row.enumerated() {
                let p = decoded[x, y]
                #expect(
                    [p[0], p[1], p[2]].map { Int(($0 * 255).rounded()) } == [Int(r), Int(g), Int(b)], "pixel (\(x), \(y))")
            }
        }
    }

    @Test func anAVIFOutputLoadsThemAndEncodes() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("o.avif").path
        let run = try Self.apply([Fixtures.corpus("special/kite.webp"), out, "--filter", "gaussian sigma=1"], in: folder)
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        #expect(run.loadedModules)
        #expect(try ImageReader.read(out).pixels.rect.width > 0)
    }
}
