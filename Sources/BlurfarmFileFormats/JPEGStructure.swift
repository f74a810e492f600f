import BlurfarmSystem
import Glibc

/// The marker structure of a JPEG file, checked before decoding: the file must reach the
/// end-of-image marker (EOI) after its last scan.
///
/// libvips never asks libjpeg to read past the last row (it skips `jpeg_finish_decompress`),
/// and libjpeg takes zero bytes for valid entropy-coded data: a JPEG cut short and padded
/// with zeros to its old length (what a failed copy or a sparse file leaves) decodes
/// without a single warning, its lost rows flat grey. Its EOI is gone, though, and that is
/// what this finds. Bytes after EOI (MPF images, maker trailers) are allowed, as libjpeg
/// allows them.
///
/// The walk, as libjpeg reads: SOI, then marker segments by their lengths (stray bytes between
/// them skipped); after a start-of-scan header, the
/// entropy-coded data up to the next marker that is not a stuffed byte (`FF 00`) nor a restart
/// marker (`FF D0`…`FF D7`); until `FF D9`.
package struct JPEGStructure {
    /// Checks the JPEG open on `fd` (read from its start with `pread`, in 64 KiB chunks).
    package static func check(_ fd: Int32) throws(FileStructureProblem) {
        var reader = ChunkReader(fd: fd)
        guard try reader.next() == 0xFF, try reader.next() == 0xD8 else {
            throw FileStructureProblem(message: "not a JPEG: no start-of-image marker")
        }
        var found: UInt8?  // a marker the entropy-coded data ended at
        while true {
            var next = found
            if next == nil { next = try reader.nextMarker() }
            found = nil
            guard let marker = next else {
                throw FileStructureProblem(message: "the file ends before its end-of-image marker: it is truncated (or padded)")
            }
            switch marker {
            case 0xD9:
                return
            case 0xD0...0xD7, 0x01:
                continue  // standalone markers
            default:
                guard let high = try reader.next(), let low = try reader.next() else {
                    throw FileStructureProblem(message: "the file ends inside a marker segment: it is truncated")
                }
                let length = Int(high) << 8 | Int(low)
                guard length >= 2 else { throw FileStructureProblem(message: "a marker segment has the impossible length \(length)") }
                guard reader.skip(length - 2) else {
                    throw FileStructureProblem(message: "the file ends inside a marker segment: it is truncated")
                }
                if marker == 0xDA {
                    guard let end = try reader.skipEntropyCodedData() else {
                        throw FileStructureProblem(message: "the file ends before its end-of-image marker: it is truncated (or padded)")
                    }
                    found = end
                }
            }
        }
    }
}

/// Sequential reads of a file by descriptor, a chunk at a time.
private struct ChunkReader {
    let fd: Int32
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    var count = 0
    var index = 0
    /// The file offset of `chunk[0]`.
    var chunkOffset = 0
    var size: Int?

    init(fd: Int32) { self.fd = fd }

    /// The next byte, nil at the end of the file.
    mutating func next() throws(FileStructureProblem) -> UInt8? {
        if index == count, !(try refill()) { return nil }
        defer { index += 1 }
        return chunk[index]
    }

    /// Reads the chunk after the current one; false at the end of the file.
    private mutating func refill() throws(FileStructureProblem) -> Bool {
        chunkOffset += count
        index = 0
        let offset = chunkOffset
        let result = chunk.withUnsafeMutableBytes { raw in
            Result { () throws(SystemCallError) -> Int in try Syscalls.read(fd, into: raw, at: offset) }
        }
        switch result {
        case .success(let n): count = n
        case .failure(let error): throw FileStructureProblem(message: "cannot read: \(error.reason)")
        }
        return count > 0
    }

    /// Skips the bytes up to the next `FF` and that byte; false when the file ends first.
    /// Entropy-coded data holds an `FF` every few hundred bytes: `memchr` finds it at the
    /// speed of memory, where a byte at a time took milliseconds for a photo.
    mutating func skipPastNextFF() throws(FileStructureProblem) -> Bool {
        while true {
            if index == count, !(try refill()) { return false }
            let (start, end) = (index, count)
            let found = chunk.withUnsafeBytes { raw -> Int? in
                memchr(raw.baseAddress! + start, 0xFF, end - start).map { UnsafeRawPointer($0) - raw.baseAddress! }
            }
            if let found {
                index = found + 1
                return true
            }
            index = count
        }
    }

    /// Skips `length` bytes; false when the file ends first.
    mutating func skip(_ length: Int) -> Bool {
        let target = chunkOffset + index + length
        if target <= chunkOffset + count {
            index += length
            return true
        }
        if size == nil { size = (try? Syscalls.status(of: fd)).map { Int($0.st_size) } ?? 0 }
        guard target <= size! else { return false }
        chunkOffset = target
        count = 0
        index = 0
        return true
    }

    /// The next marker's code (after any `FF` fill bytes), nil at the end of the file. Stray
    /// bytes before it are skipped, as libjpeg skips them (with a warning that libvips, which
    /// stops after the last row, never sees: some cameras write such bytes before EOI).
    mutating func nextMarker() throws(FileStructureProblem) -> UInt8? {
        var afterFF = false
        while let byte = try next() {
            if afterFF && byte != 0xFF && byte != 0x00 { return byte }
            afterFF = byte == 0xFF
        }
        return nil
    }

    /// Skips entropy-coded data and returns the code of the marker that ends it (read), nil
    /// at the end of the file.
    mutating func skipEntropyCodedData() throws(FileStructureProblem) -> UInt8? {
        while try skipPastNextFF() {
            var following = try next()
            while following == 0xFF { following = try next() }
            guard let code = following else { return nil }
            if code == 0x00 || (0xD0...0xD7).contains(code) { continue }
            return code
        }
        return nil
    }
}
