import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmTestSupport
import Foundation
import Testing

/// `blurfarm apply` band by band, in process and through the worker pool: the bytes of the
/// whole-image path (which writing to standard output takes), and a failure half way leaves
/// nothing behind.
@Suite(.tags(.process), .blocking) struct StreamedApplyTests {
    /// Runs `apply input output` with `arguments` three ways: in process and with two workers
    /// (both streamed when the image can be), and to standard output (the whole-image path);
    /// returns the streamed outputs' bytes, the whole image's, and the streamed runs'
    /// `--verbose` lines.
    func bothPaths(_ input: String, _ name: String, _ arguments: [String]) throws -> (streamed: [Data], whole: Data, said: [String]) {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var streamed: [Data] = [], said: [String] = []
        for workers in ["0", "2"] {
            let path = folder.appendingPathComponent(workers + "-" + name).path
            let run = try Blurfarm.run(["apply", input, path, "--workers", workers, "--verbose"] + arguments)
            #expect(run.status == 0, "\(run.stderr)")
            streamed.append(try Data(contentsOf: URL(fileURLWithPath: path)))
            said.append(run.stdout)
        }
        let whole = folder.appendingPathComponent("w-" + name).path
        let format = (name as NSString).pathExtension
        let written = try Blurfarm.run(
            ["-c", "exec \"$0\" \"$@\" > \"$WHOLE\"", Blurfarm.executable.path, "apply", input, "-", "--format", format,
                "--workers", "1", "--verbose"] + arguments, environment: ["WHOLE": whole], shell: true)
        #expect(written.status == 0, "\(written.stderr)")
        #expect(!written.stderr.contains("streamed"), "\(written.stderr)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["0-" + name, "2-" + name, "w-" + name])
        return (streamed, try Data(contentsOf: URL(fileURLWithPath: whole)), said)
    }

    @Test(arguments: [
        ("photos/plasma-Kite.jpg", "out.jpg", "clamp"), ("photos/mate-Storm.jpg", "out.png", "mirror"),
        ("special/deep-16bit.png", "out.png", "clamp"), ("special/deep-16bit.png", "out.jpg", "transparent"),
        ("special/alpha-garbage-under-transparent.png", "out.png", "grow"),
        ("special/alpha-garbage-under-transparent.png", "out.webp", "transparent"), ("special/cmyk.jpg", "out.jpg", "grow"),
    ])
    func corpusPhotosStreamToTheBytesOfTheWholeImage(_ file: String, _ name: String, _ edge: String) throws {
        let (streamed, whole, said) = try bothPaths(
            Fixtures.corpus(file), name,
            ["--filter", "gaussian sigma=6", "--filter", "motion radius=4 angle=60", "--edge", edge, "--tile", "96"])
        #expect(said.allSatisfy { $0.contains("streamed in") }, "\(said)")
        #expect(!whole.isEmpty && streamed == [whole, whole])
    }

    /// A lone gaussian over an 8-bit image, opaque RGB or RGBA, under `clamp` and `mirror`, is
    /// the kernel over the file's samples (``FilterChain/fixedPointFilter(forSourceChannels:)``;
    /// RGBA in fixed point where a pixel's window is opaque), bit for bit, whichever path renders
    /// it: streamed in process or through the workers, or whole (standard output); and RGBA
    /// written without alpha (JPEG) is the same bytes streamed or whole.
    @Test(arguments: ["clamp", "mirror"], [3, 4])
    func aLoneGaussianOverEightBitSamplesIsTheKernelStreamedOrWhole(edge: String, bands: Int) throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let samples =
            bands == 3
            ? randomSamples(width: 97, height: 61, bands: 3, format: .uint8, seed: 12)
            : randomSpottedRGBA(width: 97, height: 61, spots: 6, seed: 12)
        let input = folder.appendingPathComponent("in.png").path
        try ImageWriter.write(
            samples.floats(in: samples.rect), to: input, sourceBitDepth: 8, sourceHadAlpha: bands == 4, metadata: nil,
            options: EncodeOptions())
        let gaussian = GaussianBlur(sigma: 2.7)
        let rule = EdgeRule(rawValue: edge)!
        #expect(FilterChain(filters: [gaussian], edge: rule).fixedPointFilter(forSourceChannels: bands) != nil)
        // What the PNG holds: alpha-0 pixels lose their colour, which the blur never reads.
        let decodedInput = try ImageReader.read(input, pixelLimit: 1 << 20, memoryLimit: 1 << 30).pixels
        let stored = AnyPixels.uninitialized(decodedInput.rect, channels: bands, format: .uint8)
        stored.store(decodedInput, in: decodedInput.rect, background: .zero)
        let source = try #require(stored.uint8Samples, "8-bit samples came as \(stored.layout.format)")
        let expected = SampleBuffer<UInt8>(rect: samples.rect, channels: bands)
        gaussian.render(tile: samples.rect, source: source, image: samples.rect, edge: rule, into: expected)
        let arguments = ["--filter", "gaussian sigma=2.7", "--edge", edge, "--tile", "20"]
        let (streamed, whole, said) = try bothPaths(input, "o.png", arguments)
        #expect(said.allSatisfy { $0.contains("streamed in") }, "\(said)")
        #expect(streamed == [whole, whole])
        let output = folder.appendingPathComponent("o.png")
        try whole.write(to: output)
        let decoded = try ImageReader.read(output.path, pixelLimit: 1 << 20, memoryLimit: 1 << 30).pixels
        let written = AnyPixels.uninitialized(decoded.rect, channels: bands, format: .uint8)
        written.store(decoded, in: decoded.rect, background: .zero)
        func bytes(_ pixels: AnyPixels) -> [UInt8] {
            var all: [UInt8] = []
            pixels.forEachRow(in: pixels.rect) { row, count in all += UnsafeRawBufferPointer(start: row, count: count) }
            return all
        }
        #expect(written.rect == expected.rect && bytes(written) == bytes(.uint8(expected)), "edge \(edge), \(bands) bands")
        if bands == 4 {
            let (streamed, whole, said) = try bothPaths(input, "o.jpg", arguments)
            #expect(said.allSatisfy { $0.contains("streamed in") }, "\(said)")
            #expect(!whole.isEmpty && streamed == [whole, whole], "RGBA to JPEG, edge \(edge)")
        }
    }

    /// A lone motion blur or frost over 8-bit opaque RGB, under `clamp` and `mirror`, is the
    /// fixed-point kernel over the file's samples (``FixedPointMotion``, ``FixedPointFrost``),
    /// streamed or whole.
    @Test(arguments: ["clamp", "mirror"], ["motion radius=7 angle=30", "frost style=light sigma=9"])
    func aLoneMotionBlurOrFrostOverEightBitRGBIsTheKernelStreamedOrWhole(edge: String, spec: String) throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let samples = randomSamples(width: 97, height: 61, bands: 3, format: .uint8, seed: 13)
        let input = folder.appendingPathComponent("in.png").path
        try ImageWriter.write(
            samples.floats(in: samples.rect), to: input, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
            options: EncodeOptions())
        let filter: any SampleRenderingFilter =
            spec.hasPrefix("motion") ? MotionBlur(radius: 7, angle: 30) : FrostBlur(style: .light, sigma: 9)
        let rule = EdgeRule(rawValue: edge)!
        let source = try #require(samples.uint8Samples)
        let expected = SampleBuffer<UInt8>(rect: samples.rect, channels: 3)
        filter.render(tile: samples.rect, source: source, image: samples.rect, edge: rule, into: expected)
        let (streamed, whole, said) = try bothPaths(input, "o.png", ["--filter", spec, "--edge", edge, "--tile", "20"])
        #expect(said.allSatisfy { $0.contains("streamed in") }, "\(said)")
        #expect(streamed == [whole, whole])
        let output = folder.appendingPathComponent("o.png")
        try whole.write(to: output)
        let decoded = try ImageReader.read(output.path, pixelLimit: 1 << 20, memoryLimit: 1 << 30).pixels
        let written = AnyPixels.uninitialized(decoded.rect, channels: 3, format: .uint8)
        written.store(decoded, in: decoded.rect, background: .zero)
        #expect(written.uint8Samples?.firstDifference(from: expected) == nil, "\(spec), edge \(edge)")
    }

    @Test func smallGeneratedImagesStreamToTheSameBytes() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Translucent RGBA with 16-bit and 8-bit sources; odd sizes, bands of a few rows.
        let pixels = PixelBuffer(rect: Rect(width: 53, height: 41))
        for y in 0..<41 {
            for x in 0..<53 {
                let a = Float((x * 5 + y * 3) % 13) / 12
                pixels[x, y] = SIMD4(Float(x) / 52 * a, Float(y) / 40 * a, 0.3 * a, a)
            }
        }
        for depth in [8, 16] {
            let input = folder.appendingPathComponent("in\(depth).png").path
            try ImageWriter.write(
                pixels, to: input, sourceBitDepth: depth, sourceHadAlpha: true, metadata: nil, options: EncodeOptions())
            for (name, edge) in [("o.png", "mirror"), ("o.jpg", "clamp"), ("o.tif", "grow")] {
                let (streamed, whole, said) = try bothPaths(
                    input, name, ["--filter", "gaussian sigma=2.5", "--filter", "motion radius=3 angle=10", "--edge", edge,
                        "--tile", "7", "--colour", "linear"])
                #expect(said.allSatisfy { $0.contains("streamed in") }, "\(said)")
                #expect(streamed == [whole, whole], "\(depth)-bit source, \(name), edge \(edge)")
            }
        }
    }

    /// A format conversion (no filter) streams too, the bands copied in this process, to the
    /// bytes of the whole image: 8- and 16-bit, alpha, JPEG to WebP.
    @Test(arguments: [
        ("photos/plasma-Kite.jpg", "out.webp"), ("special/deep-16bit.png", "out.png"),
        ("special/alpha-garbage-under-transparent.png", "out.webp"), ("photos/mate-Storm.jpg", "out.jpg"),
    ])
    func aFormatConversionStreamsToTheBytesOfTheWholeImage(_ file: String, _ name: String) throws {
        let (streamed, whole, said) = try bothPaths(Fixtures.corpus(file), name, ["--tile", "96"])
        #expect(said.allSatisfy { $0.contains("no filter, edge clamp") && $0.contains("streamed in") }, "\(said)")
        #expect(!whole.isEmpty && streamed == [whole, whole])
    }

    @Test func imagesThatCannotStreamAreDecodedWhole() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases: [(String, [String])] = [
            ("special/exif-orientation-6.jpg", []),  // turned upright: needs the whole image
            ("photos/mate-GreenMeadow.jpg", ["--resize", "300"]),
        ]
        for (file, more) in cases {
            let output = folder.appendingPathComponent("o.jpg").path
            let result = try Blurfarm.run(
                ["apply", Fixtures.corpus(file), output, "--filter", "gaussian sigma=2", "--workers", "0", "--verbose"] + more)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stdout.contains("streamed"), "\(file) \(more): \(result.stdout)")
        }
    }

    /// A JPEG with less than all the metadata (whose bytes are stripped after the saver) still
    /// streams: encoded band by band into memory, stripped, written whole, without the photo's
    /// EXIF block.
    @Test(arguments: ["keep-icc", "strip"])
    func aStrippedJPEGStillStreams(_ metadata: String) throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("o.jpg").path
        let result = try Blurfarm.run(
            ["apply", Fixtures.corpus("photos/plasma-ColorfulCups.jpg"), output, "--filter", "gaussian sigma=2",
             "--workers", "0", "--verbose", "--metadata", metadata])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("streamed"), "\(metadata): \(result.stdout)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(!bytes.isEmpty && bytes.range(of: Data("Exif".utf8)) == nil)
        #expect((bytes.range(of: Data("ICC_PROFILE".utf8)) != nil) == (metadata == "keep-icc"))
    }

    /// A JPEG cut short (its end-of-image marker put back, so the structure check passes) fails
    /// when the decoder reaches the missing rows, after the first bands were filtered and
    /// encoded: no output, no temporary file, an existing output untouched, one error line.
    @Test func aDecodeFailingHalfWayLeavesNothingBehind() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("cut.jpg").path
        try LyingFiles.truncatedWithEndMarker(Fixtures.corpus("photos/plasma-Volna.jpg"), keeping: 0.6)
            .write(to: URL(fileURLWithPath: input))
        for (existing, workers) in [(false, "0"), (true, "0"), (false, "2"), (true, "2")] {
            let output = folder.appendingPathComponent("out.jpg").path
            try? FileManager.default.removeItem(atPath: output)
            if existing { try Data("old".utf8).write(to: URL(fileURLWithPath: output)) }
            let result = try Blurfarm.run([
                "apply", input, output, "--filter", "gaussian sigma=3", "--workers", workers, "--tile", "64",
            ])
            #expect(result.status == 1)
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(result.stderr)")
            #expect(lines.first?.hasPrefix("blurfarm: error: ") == true && lines.first?.contains(input) == true, "\(result.stderr)")
            let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            #expect(left == (existing ? ["cut.jpg", "out.jpg"] : ["cut.jpg"]), "\(left)")
            if existing { #expect(try String(contentsOfFile: output, encoding: .utf8) == "old") }
        }
    }
}
