import CXXHash

/// The checksum that closes every frame (WireProtocol.swift): the low 32 bits of the XXH3-64 of
/// the frame's bytes before it (xxHash's `XXH3_64bits`, seed 0, from Debian's libxxhash, the
/// library the pixel checksums and the state folder's hashes use). Of no bytes it is
/// `0x38D394C2` (XXH3-64 `0x2D06800538D394C2`, xxHash's published value).
enum FrameChecksum {
    /// The checksum of `bytes[range]`.
    static func of(_ bytes: [UInt8], _ range: Range<Int>) -> UInt32 {
        bytes.withUnsafeBytes { all in
            let part = UnsafeRawBufferPointer(rebasing: all[range])
            #if arch(x86_64)
            // The library's AVX2 or AVX-512 code, chosen at run time: the same value.
            return UInt32(truncatingIfNeeded: XXH3_64bits_dispatch(part.baseAddress, part.count))
            #else
            return UInt32(truncatingIfNeeded: XXH3_64bits(part.baseAddress, part.count))
            #endif
        }
    }
}
