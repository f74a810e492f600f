import BlurfarmSystem
import BlurfarmTestSupport
import BlurfarmCore
@testable import BlurfarmImageIO
import Foundation
import Testing

@Suite("Writing images")
struct ImageWriterTests {
    /// Reads `source`, writes it to `name` in a scratch folder, reads that back; checks that
    /// the folder then holds exactly the output.
    func roundTrip(
        _ source: String, to name: String, options: EncodeOptions = EncodeOptions()
    ) throws -> (original: DecodedImage, written: DecodedImage, header: ImageHeader) {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let original = try ImageReader.read(Corpus.path(source))
        let path = scratch.file(name)
        try ImageWriter.write(
            original.pixels, to: path, sourceBitDepth: original.bitDepth, sourceHadAlpha: original.hasAlpha,
            metadata: original.metadata, options: options)
        #expect(try scratch.contents() == [name], "temporary files left behind")
        return (original, try ImageReader.read(path), try ImageReader.header(ofFile: path))
    }

    func expectIdentical(_ a: PixelBuffer, _ b: PixelBuffer, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        #expect(a.rect == b.rect, sourceLocation: sourceLocation)
        let difference = a.firstDifference(from: b)
        #expect(
            difference == nil,
            "first difference at \(String(describing: difference)): \(difference.map { a[$0.x, $0.y] } ?? .zero) vs \(difference.map { b[$0.x, $0.y] } ?? .zero)",
            sourceLocation: sourceLocation)
    }

    @Test func png8RoundTripIsExactWithAlpha() throws {
        let (original, written, header) = try roundTrip("special/alpha-garbage-under-transparent.png", to: "a.png")
        #expect(header.bitDepth == 8 && header.hasAlpha)
        #expect(written.hasAlpha)
        expectIdentical(original.pixels, written.pixels)
    }

    @Test func png8RoundTripIsExactWithoutAlpha() throws {
        let (original, written, header) = try roundTrip("special/aqua.tif", to: "aqua.png")
        #expect(header.bitDepth == 8 && !header.hasAlpha)
        expectIdentical(original.pixels, written.pixels)
    }

    @Test func png16RoundTripIsExact() throws {
        let (original, written, header) = try roundTrip("special/deep-16bit.png", to: "deep.png")
        #expect(header.bitDepth == 16)
        #expect(written.bitDepth == 16)
        expectIdentical(original.pixels, written.pixels)
    }

    @Test func sixteenBitSourceGivesEightBitPNGWhenAsked() throws {
        let (_, written, header) = try roundTrip(
            "special/deep-16bit.png", to: "deep8.png", options: EncodeOptions(bitDepth: 8))
        #expect(header.bitDepth == 8 && written.bitDepth == 8)
    }

    @Test func losslessWebPRoundTripIsExact() throws {
        let (original, written, header) = try roundTrip(
            "special/alpha-garbage-under-transparent.png", to: "a.webp", options: EncodeOptions(lossless: true))
        #expect(header.loader.hasPrefix("webpload") && header.hasAlpha)
        expectIdentical(original.pixels, written.pixels)
    }

    @Test func tiffRoundTripIsExactAt8And16Bits() throws {
        let (original, written, header) = try roundTrip("special/alpha-garbage-under-transparent.png", to: "a.tif")
        #expect(header.loader.hasPrefix("tiffload") && header.hasAlpha && header.bitDepth == 8)
        expectIdentical(original.pixels, written.pixels)

        let deep = try roundTrip("special/deep-16bit.png", to: "deep.tiff")
        #expect(deep.header.bitDepth == 16)
        expectIdentical(deep.original.pixels, deep.written.pixels)
    }

    @Test func jpegQuality90RoundTripIsAbove35dB() throws {
        let (original, written, header) = try roundTrip("special/aqua.tif", to: "aqua.jpg")
        #expect(header.loader == "jpegload")
        let quality = psnr(original.pixels, written.pixels)
        #expect(quality > 35, "PSNR \(quality) dB")
        #expect(quality < 80, "PSNR \(quality) dB: was this really lossy?")
    }

    @Test func eightBitValuesSurviveExactlyAndDecodeAsVOver255() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let ramp = makeBuffer(width: 256, height: 1) { x, _ in
            SIMD4(Float(x) / 255, Float(255 - x) / 255, Float(x / 2) / 255, 1)
        }
        let path = scratch.file("ramp.png")
        try ImageWriter.write(
            ramp, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        let back = try ImageReader.read(path)
        #expect(!back.hasAlpha)
        for x in 0..<256 {
            let p = back.pixels[x, 0]
            #expect(p.x.bitPattern == (Float(x) / 255).bitPattern)
            #expect(p.y.bitPattern == (Float(255 - x) / 255).bitPattern)
            #expect(p.w == 1)
        }
    }

    @Test func sixteenBitValuesSurviveExactly() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let levels: [Int] = [0, 1, 2, 255, 256, 12345, 32767, 40000, 65534, 65535]
        let buffer = makeBuffer(width: levels.count, height: 1) { x, _ in
            SIMD4(Float(levels[x]) / 65535, Float(65535 - levels[x]) / 65535, 0.5, 1)
        }
        let path = scratch.file("levels.png")
        try ImageWriter.write(
            buffer, to: path, sourceBitDepth: 16, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        let back = try ImageReader.read(path)
        #expect(back.bitDepth == 16)
        for x in levels.indices {
            #expect(back.pixels[x, 0].x.bitPattern == (Float(levels[x]) / 65535).bitPattern, "level \(levels[x])")
        }
    }

    @Test func samplesRoundToNearest() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let buffer = makeBuffer(width: 1, height: 1) { _, _ in SIMD4(100.4 / 255, 100.6 / 255, 254.51 / 255, 1) }
        let path = scratch.file("round.png")
        try ImageWriter.write(
            buffer, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        let p = try ImageReader.read(path).pixels[0, 0]
        #expect(p.x == Float(100) / 255)
        #expect(p.y == Float(101) / 255)
        #expect(p.z == 1)
    }

    @Test func outOfRangeValuesAreClamped() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let buffer = makeBuffer(width: 1, height: 1) { _, _ in SIMD4(-0.5, 1.7, .nan, 1) }
        let path = scratch.file("clamp.png")
        try ImageWriter.write(
            buffer, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        let p = try ImageReader.read(path).pixels[0, 0]
        #expect(p == SIMD4(0, 1, 0, 1))
    }

    @Test func colourIsUnpremultipliedAndAlphaZeroWritesZero() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        // (0.25, 0.1, 0, 0.5) premultiplied is (0.5, 0.2, 0) straight: stored 128, 51, 0, alpha 128.
        let buffer = makeBuffer(width: 2, height: 1) { x, _ in
            x == 0 ? SIMD4(0.25, 0.1, 0, 0.5) : SIMD4(0, 0, 0, 0)
        }
        let path = scratch.file("half.png")
        try ImageWriter.write(
            buffer, to: path, sourceBitDepth: 8, sourceHadAlpha: true, metadata: nil, options: EncodeOptions())
        let back = try ImageReader.read(path)
        let a = Float(128) / 255
        #expect(back.pixels[0, 0] == SIMD4(Float(128) / 255 * a, Float(51) / 255 * a, 0, a))
        #expect(back.pixels[1, 0] == .zero)
    }

    @Test func alphaChannelAppearsWhenSourceHadItOrAnyPixelIsTranslucent() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let opaque = makeBuffer(width: 3, height: 3) { _, _ in SIMD4(0.2, 0.3, 0.4, 1) }
        let edged = makeBuffer(width: 3, height: 3) { x, _ in x == 2 ? SIMD4(0.1, 0.1, 0.1, 0.5) : SIMD4(0.2, 0.3, 0.4, 1) }
        func hasAlpha(_ pixels: PixelBuffer, sourceHadAlpha: Bool, _ name: String) throws -> Bool {
            let path = scratch.file(name)
            try ImageWriter.write(
                pixels, to: path, sourceBitDepth: 8, sourceHadAlpha: sourceHadAlpha, metadata: nil,
                options: EncodeOptions())
            return try ImageReader.header(ofFile: path).hasAlpha
        }
        #expect(try hasAlpha(opaque, sourceHadAlpha: false, "opaque.png") == false)
        #expect(try hasAlpha(opaque, sourceHadAlpha: true, "source-alpha.png") == true)
        #expect(try hasAlpha(edged, sourceHadAlpha: false, "edged.png") == true)
        #expect(try hasAlpha(edged, sourceHadAlpha: false, "edged.webp") == true)
        #expect(try hasAlpha(edged, sourceHadAlpha: true, "edged.jpg") == false)
    }

    @Test func jpegIsFlattenedOverTheBackground() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        // Left half fully transparent, right half half-transparent red (premultiplied).
        let buffer = makeBuffer(width: 64, height: 64) { x, _ in x < 32 ? .zero : SIMD4(0.5, 0, 0, 0.5) }
        let path = scratch.file("flat.jpg")
        try ImageWriter.write(
            buffer, to: path, sourceBitDepth: 8, sourceHadAlpha: true, metadata: nil,
            options: EncodeOptions(quality: 100, background: SIMD3(0, 0, 1)))
        let back = try ImageReader.read(path)
        #expect(!back.hasAlpha)
        let left = back.pixels[8, 32], right = back.pixels[56, 32]
        let tolerance: Float = 3 / 255
        for (value, expected) in zip([left.x, left.y, left.z, right.x, right.y, right.z], [0, 0, 1, 0.5, 0, 0.5] as [Float]) {
            #expect(abs(value - expected) < tolerance, "\(value) vs \(expected)")
        }
    }

    @Test func aViewWithAnOffsetOriginIsWrittenWhole() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let big = makeBuffer(width: 10, height: 10) { x, y in SIMD4(Float(x) / 255, Float(y) / 255, 0, 1) }
        let view = big.view(Rect(x: 3, y: 4, width: 5, height: 2))
        let path = scratch.file("view.png")
        try ImageWriter.write(
            view, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        let back = try ImageReader.read(path)
        #expect(back.pixels.rect == Rect(width: 5, height: 2))
        #expect(back.pixels[0, 0] == SIMD4(Float(3) / 255, Float(4) / 255, 0, 1))
        #expect(back.pixels[4, 1] == SIMD4(Float(7) / 255, Float(5) / 255, 0, 1))
    }

    @Test func writingOverAnExistingFileReplacesIt() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("out.png")
        for value in [0.25, 0.75] as [Float] {
            let pixels = makeBuffer(width: 4, height: 4) { _, _ in SIMD4(value, value, value, 1) }
            try ImageWriter.write(
                pixels, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        }
        #expect(try ImageReader.read(path).pixels[0, 0].x == Float(191) / 255)
        #expect(try scratch.contents() == ["out.png"])
    }

    @Test func orientationIsNotAppliedTwice() throws {
        for name in ["upright.jpg", "upright.png", "upright.webp"] {
            let (original, written, header) = try roundTrip("special/exif-orientation-6.jpg", to: name)
            #expect(original.pixels.rect == Rect(width: 853, height: 1280))
            #expect(header.width == 853 && header.height == 1280, "\(name)")
            #expect(header.orientation == 1, "\(name)")
            #expect(written.pixels.rect == Rect(width: 853, height: 1280), "\(name)")
            #expect(written.metadata.exif != nil, "\(name): EXIF was dropped")
        }
    }

    @Test func metadataIsKeptUnlessStripped() throws {
        let kept = try roundTrip("special/display-p3.jpg", to: "p3.png")
        #expect(kept.header.hasICCProfile)
        #expect(kept.written.metadata.iccProfile == kept.original.metadata.iccProfile)
        #expect(kept.written.metadata.exif != nil)
        // The profile written describes the pixels as written: reading them back changes nothing.
        expectIdentical(kept.original.pixels, kept.written.pixels)

        let keptJPEG = try roundTrip("special/display-p3.jpg", to: "p3.jpg")
        #expect(keptJPEG.header.hasICCProfile)

        let xmp = try roundTrip("special/kite.webp", to: "kite.webp", options: EncodeOptions(lossless: true))
        #expect(xmp.original.metadata.xmp != nil)
        #expect(xmp.written.metadata.xmp == xmp.original.metadata.xmp)
    }

    /// A `keep-icc` output keeps the ICC profile, which says what its colours mean, and nothing
    /// else: this photo's EXIF (with GPS position) and XMP are gone in every format, including
    /// the EXIF block libvips's JPEG and WebP savers make of their own.
    @Test(arguments: ["jpg", "png", "webp", "tif"])
    func strippedOutputsKeepTheColourProfileAndNothingElse(format: String) throws {
        let stripped = try roundTrip(
            "photos/plasma-ColorfulCups.jpg", to: "stripped.\(format)", options: EncodeOptions(metadata: .keepICC))
        #expect(stripped.original.metadata.exif != nil && stripped.original.metadata.xmp != nil)
        #expect(stripped.header.hasICCProfile)
        #expect(stripped.written.metadata.iccProfile == stripped.original.metadata.iccProfile)
        #expect(stripped.written.metadata.exif == nil)
        #expect(stripped.written.metadata.xmp == nil)
        // A source without a profile gives an output with no metadata at all.
        let bare = try roundTrip("special/exif-orientation-6.jpg", to: "bare.\(format)", options: EncodeOptions(metadata: .keepICC))
        #expect(bare.original.metadata.exif != nil && bare.original.metadata.iccProfile == nil)
        #expect(bare.written.metadata.iccProfile == nil && bare.written.metadata.exif == nil)
        #expect(bare.written.metadata.xmp == nil)
    }

    /// A `strip` output carries no metadata at all, ICC profile included: its samples are
    /// those of `keep-icc`, which are sRGB whatever the source's profile (the Display P3 photo
    /// decodes converted, exactly as `vips icc_transform … srgb --embedded` converts it), so
    /// that they mean the same without a profile.
    @Test(.tags(.process), arguments: ["png", "jpg", "webp"])
    func strippedOutputsCarryNothingAndTheirColoursAreSRGB(format: String) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let stripped = try roundTrip("special/display-p3.jpg", to: "p3.\(format)", options: EncodeOptions(metadata: .strip))
        #expect(stripped.original.metadata.iccProfile != nil)
        #expect(!stripped.header.hasICCProfile)
        #expect(stripped.written.metadata.iccProfile == nil && stripped.written.metadata.exif == nil)
        #expect(stripped.written.metadata.xmp == nil)
        if format == "png" {
            let expected = scratch.file("expected.png")
            let vips = Process()
            vips.executableURL = URL(fileURLWithPath: "/usr/bin/vips")
            vips.arguments = ["icc_transform", Corpus.path("special/display-p3.jpg"), expected, "srgb", "--embedded"]
            try vips.run()
            vips.waitUntilExit()
            #expect(vips.terminationStatus == 0)
            let converted = try ImageReader.read(expected)
            expectIdentical(stripped.written.pixels, converted.pixels)
            let kept = try roundTrip("special/display-p3.jpg", to: "kept.png", options: EncodeOptions(metadata: .keepICC))
            expectIdentical(kept.written.pixels, stripped.written.pixels)
            #expect(kept.header.hasICCProfile)
        }
        let bare = try roundTrip("special/exif-orientation-6.jpg", to: "bare.\(format)", options: EncodeOptions(metadata: .strip))
        let same = try roundTrip("special/exif-orientation-6.jpg", to: "same.\(format)", options: EncodeOptions(metadata: .keepICC))
        #expect(bare.written.pixels.firstDifference(from: same.written.pixels) == nil)
        #expect(bare.written.metadata.exif == nil && bare.written.metadata.iccProfile == nil)
    }

    /// Temporary files this host's writers left, untouched for the minimum age and proven
    /// blurfarm's (the extended attribute set when they were created), are removed; those of
    /// live processes (this one, pid 1), recent ones, and files that merely look like them
    /// (someone else's, without the mark, or a link) are kept.
    @Test(.tags(.process)) func onlyTemporaryFilesProvenAbandonedAreRemoved() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let dead = child.processIdentifier  // reaped: no process has it now
        let folder = open(scratch.path, O_RDONLY | O_DIRECTORY)
        defer { close(folder) }
        /// A temporary file as a writer with `pid` creates it.
        func temporary(for name: String, pid: Int32) throws -> String {
            let created = try AtomicFile.createTemporary(for: OutputPath(scratch.file(name)), in: folder, pid: pid)
            close(created.descriptor)
            return created.name
        }
        let abandoned = try temporary(for: "a.png", pid: dead)
        let live = [try temporary(for: "b.png", pid: getpid()), try temporary(for: "c.png", pid: 1)]
        let recent = try temporary(for: "g.png", pid: dead)
        let host = AtomicFile.host
        let lookAlikes = [
            ".d.png.blurfarm-\(host)-\(dead)-Ab3xYzAb3xYz",  // our pattern, but not marked: someone else's
            ".e.png.blurfarm-\(dead)-Ab3xYz",  // the pattern of old
            ".f.png.blurfarm-other.host-\(dead)-Ab3xYzAb3xYz",  // another host's
        ]
        for name in lookAlikes { try Data("x".utf8).write(to: URL(fileURLWithPath: scratch.file(name))) }
        // A link named as the abandoned file would be, to a marked file: never followed.
        let victim = try temporary(for: "victim.png", pid: 1)
        let link = ".h.png.blurfarm-\(host)-\(dead)-" + abandoned.suffix(12)
        try FileManager.default.createSymbolicLink(atPath: scratch.file(link), withDestinationPath: victim)
        let hourAgo = Date().addingTimeInterval(-3600)
        for name in try scratch.contents() where name != recent {
            try FileManager.default.setAttributes([.modificationDate: hourAgo], ofItemAtPath: scratch.file(name))
        }
        let before = try scratch.contents()
        let removed = ImageWriter.removeAbandonedTemporaryFiles(inFolder: scratch.path, minimumAge: 600)
        #expect(removed == [scratch.file(abandoned)])
        #expect(try scratch.contents() == before.filter { $0 != abandoned })
        #expect(Set(before).isSuperset(of: live + lookAlikes + [recent, victim, link]))
    }
}

/// Names that are not UTF-8, carried as `PathEncoding` makes them (U+F7E9 for the byte 0xE9),
/// reach the file system as their bytes.
@Suite struct NamesThatAreNotUTF8Tests {
    /// Written under the raw name, read back from it; an abandoned temporary file of that name
    /// is swept.
    @Test(.tags(.process)) func anOutputIsWrittenReadAndItsTemporaryFileSweptUnderItsRawName() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.file("caf\u{F7E9}.png")
        let decoded = try ImageReader.read(Corpus.path("special/kite.webp"))
        try ImageWriter.write(
            decoded.pixels, to: path, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        #expect(RawNames.inFolder(scratch.path) == [Array("caf".utf8) + [0xE9] + Array(".png".utf8)])
        #expect(try ImageReader.read(path).pixels.rect == decoded.pixels.rect)

        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let folder = open(scratch.path, O_RDONLY | O_DIRECTORY)
        defer { close(folder) }
        let temporary = try AtomicFile.createTemporary(for: OutputPath(path), in: folder, pid: child.processIdentifier)
        close(temporary.descriptor)
        #expect(RawNames.inFolder(scratch.path)?.contains(Array(PathEncoding.bytes(temporary.name))) == true)
        #expect(ImageWriter.removeAbandonedTemporaryFiles(inFolder: scratch.path, minimumAge: 0) == [scratch.file(temporary.name)])
        #expect(RawNames.inFolder(scratch.path) == [Array("caf".utf8) + [0xE9] + Array(".png".utf8)])
    }
}

@Suite struct EncodedImageVerificationTests {
    /// A lossless file must give back every sample; a lossy one, at any quality, passes when
    /// honestly encoded (quality 1 too: the quality is the user's) and fails where a strip of
    /// its rows is not the picture (here rows 32–47 inverted in the pixels it is checked against).
    @Test func losslessOutputsCheckExactlyAndLossyOnesStripByStrip() throws {
        let decoded = try ImageReader.read(Corpus.path("special/kite.webp"))
        let png = try ImageWriter.encode(
            decoded.pixels, for: "/tmp/x.png", sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        #expect(png.isLossless)
        #expect(try png.mismatch(against: decoded.pixels) == nil)
        let formats = [("jpg", [1, 30, 75, 90, 100]), ("webp", [1, 30, 75, 90, 100])]
            + (ImageWriter.unavailability(of: .avif) == nil ? [("avif", [1, 50, 90])] : [])
        for (format, qualities) in formats {
            for quality in qualities {
                let honest = try ImageWriter.encode(
                    decoded.pixels, for: "/tmp/x.\(format)", sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
                    options: EncodeOptions(quality: quality))
                #expect(!honest.isLossless)
                let mismatch = try honest.mismatch(against: decoded.pixels)
                #expect(mismatch == nil, "\(format) at quality \(quality): \(mismatch ?? "")")
            }
        }
        let inverted = makeBuffer(width: decoded.pixels.rect.width, height: decoded.pixels.rect.height) { x, y in
            let p = decoded.pixels[x, y]
            return (32..<48).contains(y) ? SIMD4(1 - p.x, 1 - p.y, 1 - p.z, 1) : SIMD4(p.x, p.y, p.z, 1)
        }
        for quality in [1, 90] {
            let jpeg = try ImageWriter.encode(
                decoded.pixels, for: "/tmp/x.jpg", sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil,
                options: EncodeOptions(quality: quality))
            let message = try jpeg.mismatch(against: inverted)
            #expect(message?.hasPrefix("rows 32–47 decode at a PSNR of ") == true, "\(message ?? "nil")")
            #expect(message?.hasSuffix(" dB for quality \(quality)") == true, "\(message ?? "nil")")
        }
        // A lossless file compared with other pixels names the differing samples.
        let other = PixelBuffer(rect: decoded.pixels.rect, channels: 3)
        #expect(try png.mismatch(against: other)?.contains("samples differ") == true)
    }

    /// Premultiplied pixels of every alpha, as the kernels leave them after a blur over a
    /// transparent edge: each value a premultiplied colour that no 8- or 16-bit straight sample
    /// need represent exactly.
    static let translucent = makeBuffer(width: 97, height: 61) { x, y in
        let a = Float((x * 7 + y * 13) % 256) / 255 * 0.999 + Float(x % 3) * 0.0003
        let c = SIMD3<Float>(Float(x) / 96, Float(y) / 60, Float((x * y) % 101) / 100)
        return SIMD4(c.x * a, c.y * a, c.z * a, a)
    }

    @Test(arguments: [("png", 8, false), ("png", 16, false), ("tif", 8, false), ("tif", 16, false), ("webp", 8, true)])
    func translucentPixelsCheckInEveryLosslessFormat(format: String, bitDepth: Int, lossless: Bool) throws {
        let pixels = Self.translucent
        let encoded = try ImageWriter.encode(
            pixels, for: "/tmp/translucent.\(format)", sourceBitDepth: bitDepth, sourceHadAlpha: true, metadata: nil,
            options: EncodeOptions(lossless: lossless, bitDepth: bitDepth))
        #expect(encoded.isLossless && encoded.hasAlpha && encoded.bitDepth == bitDepth)
        let mismatch = try encoded.mismatch(against: pixels)
        #expect(mismatch == nil, "\(mismatch ?? "")")
        // One sample off by one level is still found.
        let changed = makeBuffer(width: 97, height: 61) { x, y in
            var p = pixels[x, y]
            if x == 40 && y == 30 { p = SIMD4(p.x, p.y, p.z, 1); p.x = 0.5 }
            return p
        }
        #expect(try encoded.mismatch(against: changed)?.contains("samples differ") == true)
    }
}
