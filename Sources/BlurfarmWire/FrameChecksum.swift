import BlurfarmCore

/// The checksum that closes every frame (WireProtocol.swift): the low 32 bits of the XXH3-64 of
/// the frame's bytes before it (xxHash's `XXH3_64bits`, seed 0: ``XXH3``, the library the pixel
/// checksums and the state folder's hashes use). Of no bytes it is `0x38D394C2` (XXH3-64
/// `0x2D06800538D394C2`, xxHash's published value).
enum FrameChecksum {
    /// The checksum of `bytes[range]`.
    static func of(_ bytes: [UInt8], _ range: Range<Int>) -> UInt32 {
        bytes.withUnsafeBytes { all in
            let part = UnsafeRawBufferPointer(rebasing: all[range])
            return UInt32(truncatingIfNeeded: XXH3.hash(part.baseAddress, part.count))
        }
    }
}
