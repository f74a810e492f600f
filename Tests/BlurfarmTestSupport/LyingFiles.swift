// Image files that lie: cut short, padded, damaged, or claiming a size their data does not
// hold. Made from corpus files (or by Python's zlib) at test time.
import Foundation

public enum LyingFiles {
    /// The first `fraction` of `source`'s bytes, then zeros up to its old length (what a failed
    /// copy or a sparse file leaves): no end-of-image marker, and data libjpeg takes as valid.
    public static func truncatedAndPadded(_ source: String, keeping fraction: Double) throws -> Data {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let kept = Int(Double(bytes.count) * fraction)
        return bytes.prefix(kept) + Data(count: bytes.count - kept)
    }

    /// The first `fraction` of `source`'s bytes.
    public static func truncated(_ source: String, keeping fraction: Double) throws -> Data {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        return bytes.prefix(Int(Double(bytes.count) * fraction))
    }

    /// The first `fraction` of `source`'s bytes (a baseline JPEG), then an end-of-image marker
    /// (`FF D9`): a file cut short that still passes the structure check, whose decoder fails
    /// only when it reaches the missing rows ("Premature end of JPEG file").
    public static func truncatedWithEndMarker(_ source: String, keeping fraction: Double) throws -> Data {
        try truncated(source, keeping: fraction) + Data([0xFF, 0xD9])
    }

    /// `source` (a baseline JPEG) with a restart marker (`FF D4`) written over two bytes in the
    /// middle of its entropy-coded data: the file still ends with its end-of-image marker,
    /// and libjpeg only warns ("Corrupt JPEG data: premature end of data segment") and fills
    /// the rest of the image with grey.
    public static func damagedEntropyCodedData(_ source: String) throws -> Data {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let middle = bytes.count / 2
        bytes[middle] = 0xFF
        bytes[middle + 1] = 0xD4
        return bytes
    }

    /// `source` (a JPEG) with the size in its start-of-frame header replaced by
    /// `width` × `height`: a small file claiming a huge image.
    public static func jpegClaiming(_ source: String, width: Int, height: Int) throws -> Data {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        var index = 2
        while index + 9 < bytes.count {
            precondition(bytes[index] == 0xFF, "a marker segment")
            let marker = bytes[index + 1]
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if (0xC0...0xC2).contains(marker) {
                // FF Cn, length (2), precision (1), height (2), width (2)
                bytes[index + 5] = UInt8(height >> 8)
                bytes[index + 6] = UInt8(height & 0xFF)
                bytes[index + 7] = UInt8(width >> 8)
                bytes[index + 8] = UInt8(width & 0xFF)
                return bytes
            }
            index += 2 + length
        }
        preconditionFailure("no start-of-frame header in \(source)")
    }

    /// A black 1-bit grey PNG of `width` × `height` pixels, compressed by Python's zlib
    /// (60000 × 60000 is about 440 KB): a decompression bomb whose every byte is honest.
    public static func pngBomb(width: Int, height: Int) throws -> Data {
        let script = """
            import sys, zlib, struct
            w, h = int(sys.argv[1]), int(sys.argv[2])
            def chunk(kind, data):
                return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
            row = b'\\0' * (1 + (w + 7) // 8)
            z = zlib.compressobj(9)
            parts = [z.compress(row * 1000) for _ in range(h // 1000)] + [z.compress(row * (h % 1000)), z.flush()]
            ihdr = struct.pack('>IIBBBBB', w, h, 1, 0, 0, 0, 0)
            sys.stdout.buffer.write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', ihdr) + chunk(b'IDAT', b''.join(parts)) + chunk(b'IEND', b''))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, "\(width)", "\(height)"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
        return data
    }
}
