import BlurfarmCore
import CVips
@testable import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// A large JPEG encoded in chunks and spliced (`JPEGChunks`) is byte for byte one serial
/// encode with the plan's restart markers, so whether the chunks are encoded at once changes
/// nothing but the time; it decodes, in libvips, libjpeg-turbo's `djpeg` and Pillow, to the
/// pixels of a serial encode without restart markers, and is less than 0.5% larger.
@Suite struct JPEGChunksTests {
    /// The 3840 × 2160 photo's 8-bit samples (3 channels, packed) and its metadata.
    static let photo: (samples: [UInt8], width: Int, height: Int, metadata: ImageMetadata) = {
        let image = try! ImageReader.read(Corpus.path("special/bench-3840x2160.jpg"))
        let samples = PixelConversion.samples(image.pixels, alpha: false, background: SIMD3(1, 1, 1), as: UInt8.self)
        return (samples, image.pixels.rect.width, image.pixels.rect.height, image.metadata)
    }()

    /// Settings that chunk: both chroma layouts (auto below and at quality 90, and asked),
    /// the colour profile kept or not.
    static let settings: [EncodeOptions] = [
        EncodeOptions(quality: 90, metadata: .keepICC), EncodeOptions(quality: 85, metadata: .keepICC),
        EncodeOptions(quality: 95, metadata: .strip, subsampling: .halved),
        EncodeOptions(quality: 75, metadata: .strip, subsampling: .full),
    ]

    /// `samples` (the top `height` rows of the photo, `width` wide from the left) encoded
    /// serially, with `restartInterval`.
    static func serial(
        width: Int, height: Int, options: EncodeOptions, restartInterval: Int
    ) throws -> [UInt8] {
        let rows = (0..<height).flatMap { y in photo.samples[(y * photo.width * 3)..<((y * photo.width + width) * 3)] }
        let image = try Libvips.withInterpretation(
            Libvips.image(copying: Array(rows), width: width, height: height, bands: 3, format: VIPS_FORMAT_UCHAR),
            ImageWriter.interpretation(bitDepth: 8))
        ImageWriter.tag(image, metadata: photo.metadata, options: options)
        return try ImageFormat.jpeg.encode(image, options: options, restartInterval: restartInterval)
    }

    /// The chunks of the same, encoded at once and spliced.
    static func spliced(width: Int, height: Int, options: EncodeOptions, plan: JPEGChunks.Plan) throws -> [UInt8] {
        let rows = (0..<height).flatMap { y in photo.samples[(y * photo.width * 3)..<((y * photo.width + width) * 3)] }
        return try Array(rows).withUnsafeBytes { raw in
            Result { () throws(LibvipsFailure) in
                try JPEGChunks.encode(raw, width: width, height: height, metadata: photo.metadata, options: options, plan: plan)
            }
        }.get()
    }

    /// The samples libvips decodes `bytes` to.
    static func decoded(_ bytes: [UInt8]) throws -> [UInt8] {
        try Libvips.withImage(decoding: bytes) { (image) throws(LibvipsFailure) in
            try Libvips.withComputedPixels(of: image) { (pixels) throws(LibvipsFailure) in Array(pixels) }
        }
    }

    @Test func aSplicedFileIsOneSerialEncodeWithItsRestartMarkersAndDecodesToItsPixels() throws {
        let photo = Self.photo
        // The whole photo, and a crop whose width and height are no whole number of MCUs.
        for (width, height) in [(photo.width, photo.height), (3839, 2157)] {
            for options in Self.settings {
                let plan = try #require(
                    JPEGChunks.plan(width: width, height: height, format: .jpeg, options: options, bitDepth: 8),
                    "\(width)x\(height) at \(options.quality) is chunked")
                #expect(plan.rows % (JPEGChunks.halvesChroma(options) ? 16 : 8) == 0)
                let spliced = try Self.spliced(width: width, height: height, options: options, plan: plan)
                let serial = try Self.serial(width: width, height: height, options: options, restartInterval: plan.interval)
                #expect(spliced == serial, "\(width)x\(height) q\(options.quality): the chunks are the serial encode's bytes")
                let plain = try Self.serial(width: width, height: height, options: options, restartInterval: 0)
                #expect(try Self.decoded(spliced) == Self.decoded(plain), "the pixels of a serial encode")
                #expect(Double(spliced.count) < Double(plain.count) * 1.005, "\(spliced.count) against \(plain.count) bytes")
                let markers = zip(spliced, spliced.dropFirst()).filter { $0 == 0xFF && (0xD0...0xD7).contains($1) }.count
                #expect(markers == (height + plan.rows - 1) / plan.rows - 1, "a restart marker between each two chunks")
            }
        }
    }

    /// The chunks as a band writer hands them over, in bands of any height: the same file.
    @Test func theQueueSplicesBandsOfAnyHeightIntoTheSameFile() throws {
        let photo = Self.photo
        let options = EncodeOptions(quality: 85, metadata: .keepICC)
        let plan = try #require(JPEGChunks.plan(width: photo.width, height: photo.height, format: .jpeg, options: options, bitDepth: 8))
        let expected = try Self.spliced(width: photo.width, height: photo.height, options: options, plan: plan)
        for band in [1, 100, 256, 700] {
            let queue = JPEGChunkQueue(width: photo.width, height: photo.height, plan: plan, metadata: photo.metadata, options: options)
            var top = 0
            photo.samples.withUnsafeBytes { raw in
                while top < photo.height {
                    let rows = min(band, photo.height - top)
                    queue.append(UnsafeRawBufferPointer(rebasing: raw[(top * photo.width * 3)..<((top + rows) * photo.width * 3)]), count: rows)
                    top += rows
                }
            }
            #expect(try queue.finish() == expected, "bands of \(band) rows")
        }
    }

    /// libjpeg-turbo's `djpeg` and Pillow (Debian's, scripts/setup.sh) decode the spliced file
    /// to the pixels they decode a serial encode to.
    @Test(.tags(.process)) func djpegAndPillowDecodeTheSplicedFileToTheSerialPixels() throws {
        let photo = Self.photo
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let options = EncodeOptions(quality: 85, metadata: .keepICC)
        let plan = try #require(JPEGChunks.plan(width: photo.width, height: photo.height, format: .jpeg, options: options, bitDepth: 8))
        let files = [
            ("spliced.jpg", try Self.spliced(width: photo.width, height: photo.height, options: options, plan: plan)),
            ("plain.jpg", try Self.serial(width: photo.width, height: photo.height, options: options, restartInterval: 0)),
        ]
        for (name, bytes) in files { try Data(bytes).write(to: URL(fileURLWithPath: scratch.file(name))) }
        let djpeg = "/usr/bin/djpeg", python = "/usr/bin/python3"
        try #require(FileManager.default.isExecutableFile(atPath: djpeg), "djpeg (libjpeg-turbo-progs): run scripts/setup.sh")
        func output(_ program: String, _ arguments: [String]) throws -> Data {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(program) \(arguments)")
            return data
        }
        let pillow = "import sys; from PIL import Image; sys.stdout.buffer.write(Image.open(sys.argv[1]).convert('RGB').tobytes())"
        for decode in [{ (path: String) in try output(djpeg, ["-ppm", path]) }, { path in try output(python, ["-c", pillow, path]) }] {
            let spliced = try decode(scratch.file("spliced.jpg")), plain = try decode(scratch.file("plain.jpg"))
            #expect(spliced.count >= photo.width * photo.height * 3 && spliced == plain)
        }
    }

    /// One core's encoder (a worker) never chunks at once; two chunk only a very large image;
    /// from `parallelCores` every planned one.
    @Test func theChunksAreEncodedAtOnceByTheCoresAndTheImagesSize() {
        let (k4, big) = (3840 * 2160, 21248 * 11952)
        func parallel(_ pixels: Int, cores: Int) -> Bool { JPEGChunks.encodesInParallel(pixels: pixels, cores: cores) }
        #expect(!parallel(k4, cores: 1) && !parallel(big, cores: 1))
        #expect(!parallel(k4, cores: 2) && parallel(big, cores: 2))
        #expect(parallel(JPEGChunks.parallelPixelsOnTwoCores, cores: 2))
        #expect(parallel(k4, cores: JPEGChunks.parallelCores) && parallel(big, cores: JPEGChunks.parallelCores))
    }

    @Test func whatIsEncodedWholeHasNoPlan() {
        let large = (width: 3840, height: 2160)
        func plan(_ options: EncodeOptions, format: ImageFormat = .jpeg, bitDepth: Int = 8, size: (width: Int, height: Int) = large)
            -> JPEGChunks.Plan?
        {
            JPEGChunks.plan(width: size.width, height: size.height, format: format, options: options, bitDepth: bitDepth)
        }
        #expect(plan(EncodeOptions()) == nil, "all the metadata kept: libvips's EXIF block would give a chunk's height")
        #expect(plan(EncodeOptions(metadata: .keepICC)) != nil)
        #expect(plan(EncodeOptions(metadata: .keepICC, progressive: true)) == nil)
        #expect(plan(EncodeOptions(metadata: .keepICC, optimizeCoding: true)) == nil)
        #expect(plan(EncodeOptions(metadata: .keepICC), format: .png) == nil)
        #expect(plan(EncodeOptions(metadata: .keepICC), bitDepth: 16) == nil)
        #expect(plan(EncodeOptions(metadata: .keepICC), size: (1920, 1080)) == nil, "below the pixels worth chunking")
        #expect(plan(EncodeOptions(quality: 85, metadata: .keepICC), size: (40000, 240)) == nil, "one chunk of 256 rows")
        // So wide that 32 MCU rows pass 65535 MCUs: fewer rows a chunk, the interval within 16 bits.
        let wide = plan(EncodeOptions(quality: 95, metadata: .keepICC), size: (21248, 11952))
        #expect(wide == JPEGChunks.Plan(rows: 192, interval: 24 * 2656))
    }

    @Test func aPartThatIsNotThePlansIsRefused() throws {
        let photo = Self.photo
        let options = EncodeOptions(quality: 85, metadata: .strip)
        let (width, height) = (photo.width, 600)
        let plan = try #require(JPEGChunks.plan(width: width, height: 2160, format: .jpeg, options: options, bitDepth: 8))
        let plain = try Self.serial(width: width, height: height, options: options, restartInterval: 0)
        #expect(throws: LibvipsFailure.self) { try JPEGChunks.splice([plain, plain], height: 1200, plan: plan) }
        #expect(throws: LibvipsFailure.self) { try JPEGChunks.splice([Array(plain.dropLast(2))], height: 600, plan: plan) }
    }
}
