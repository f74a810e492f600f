import BlurfarmFileFormats
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// The JPEG structure check (`JPEGStructure`, which finds a JPEG cut short or padded before
/// libjpeg decodes it into grey rows) against the obvious walk over the file's bytes, on a
/// real photo changed in the ways that matter: cut anywhere, padded with zeros, and `FF` runs,
/// stuffed bytes, restart and other markers written across the 64 KiB chunks the check reads.
@Suite struct JPEGStructureTests {
    /// The walk the check makes (libjpeg's), a byte at a time over the file in memory: nil
    /// when the file reaches its end-of-image marker, else the check's message.
    static func referenceProblem(_ bytes: [UInt8]) -> String? {
        let truncated = "the file ends before its end-of-image marker: it is truncated (or padded)"
        let insideSegment = "the file ends inside a marker segment: it is truncated"
        var i = 0
        func next() -> UInt8? {
            guard i < bytes.count else { return nil }
            defer { i += 1 }
            return bytes[i]
        }
        guard next() == 0xFF, next() == 0xD8 else { return "not a JPEG: no start-of-image marker" }
        var found: UInt8?
        while true {
            var marker = found
            found = nil
            if marker == nil {
                var afterFF = false
                while let byte = next() {
                    if afterFF && byte != 0xFF && byte != 0x00 {
                        marker = byte
                        break
                    }
                    afterFF = byte == 0xFF
                }
            }
            guard let code = marker else { return truncated }
            if code == 0xD9 { return nil }
            if (0xD0...0xD7).contains(code) || code == 0x01 { continue }
            guard let high = next(), let low = next() else { return insideSegment }
            let length = Int(high) << 8 | Int(low)
            guard length >= 2 else { return "a marker segment has the impossible length \(length)" }
            guard i + length - 2 <= bytes.count else { return insideSegment }
            i += length - 2
            guard code == 0xDA else { continue }
            // Entropy-coded data: up to a marker that is neither a stuffed byte nor a restart.
            while let byte = next() {
                guard byte == 0xFF else { continue }
                var following = next()
                while following == 0xFF { following = next() }
                guard let end = following else { return truncated }
                if end == 0x00 || (0xD0...0xD7).contains(end) { continue }
                found = end
                break
            }
            if found == nil { return truncated }
        }
    }

    /// What the check says of `bytes`, written to a file: nil when it passes.
    static func checkProblem(_ bytes: [UInt8], in scratch: ScratchFolder) throws -> String? {
        let path = scratch.file("case.jpg")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        do throws(FileStructureProblem) {
            try JPEGStructure.check(fd)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func theCheckAgreesWithTheByteByByteWalk() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let photo = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Corpus.path("photos/mate-Aqua.jpg"))))
        #expect(photo.count > 3 << 16, "the photo spans several of the check's chunks")
        #expect(Self.referenceProblem(photo) == nil)
        #expect(try Self.checkProblem(photo, in: scratch) == nil)
        var random = SplitMix(seed: 12)
        // Near a chunk's start or end, or anywhere.
        func position(in count: Int) -> Int {
            guard Bool.random(using: &random) else { return Int.random(in: 2..<count, using: &random) }
            let boundary = (1 << 16) * Int.random(in: 1...(count >> 16), using: &random)
            return min(count - 1, max(2, boundary + Int.random(in: -4...4, using: &random)))
        }
        var passed = 0
        for number in 0..<300 {
            var bytes = photo
            switch number % 4 {
            case 0:  // cut short
                bytes.removeSubrange(position(in: bytes.count)...)
            case 1:  // cut and padded with zeros to its length
                let cut = position(in: bytes.count)
                bytes.replaceSubrange(cut..., with: repeatElement(0, count: bytes.count - cut))
            case 2:  // an FF run and a code: stuffing, a restart, end of image or another marker
                let codes: [UInt8] = [0x00, 0xD0, 0xD7, 0xD9, 0xFF, 0xC4, 0x01, UInt8.random(in: 0...255, using: &random)]
                let run = [UInt8](repeating: 0xFF, count: Int.random(in: 1...3, using: &random))
                bytes.insert(contentsOf: run + [codes.randomElement(using: &random)!], at: position(in: bytes.count))
            default:  // bytes overwritten with FF
                for _ in 0..<Int.random(in: 1...4, using: &random) { bytes[position(in: bytes.count)] = 0xFF }
            }
            let expected = Self.referenceProblem(bytes)
            if expected == nil { passed += 1 }
            #expect(try Self.checkProblem(bytes, in: scratch) == expected, "case \(number) of seed 12")
        }
        #expect(passed > 0 && passed < 300, "cases that pass and cases that fail: \(passed) passed")
    }

    /// An `FF` and the code after it written over the photo's entropy-coded data exactly
    /// across each boundary of the check's 64 KiB chunks (the `FF` a chunk's last byte, or
    /// the code the next chunk's first).
    @Test func aMarkerAcrossTheChecksChunksIsFound() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let photo = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Corpus.path("photos/mate-Aqua.jpg"))))
        var ended = 0
        for boundary in stride(from: 1 << 16, to: photo.count - 4, by: 1 << 16) {
            for at in boundary - 3...boundary {
                for code: UInt8 in [0x00, 0xD3, 0xD9, 0xC4, 0xFF] {
                    var bytes = photo
                    bytes[at] = 0xFF
                    bytes[at + 1] = code
                    let expected = Self.referenceProblem(bytes)
                    if expected == nil { ended += 1 }
                    #expect(try Self.checkProblem(bytes, in: scratch) == expected, "FF \(code) at \(at)")
                }
            }
        }
        #expect(ended > 0, "an end-of-image marker written across a boundary ends the walk there")
    }
}
