import CXXHash

/// XXH3-64 (libxxhash, Debian's libxxhash-dev): the pixel checksums (``PixelChecksum``) and the
/// checksum that closes every frame of the wire protocol. libxxhash's run-time dispatching
/// version on x86-64 (the SIMD the processor has: its plain functions are built for the x86-64
/// baseline, about three times slower here), the portable one elsewhere: the same values.
public enum XXH3 {
    /// XXH3-64 of the `length` bytes at `data` with `seed` (seed 0 is the unseeded XXH3-64).
    @inline(__always)
    public static func hash(_ data: UnsafeRawPointer?, _ length: Int, seed: UInt64 = 0) -> UInt64 {
        #if arch(x86_64)
        XXH3_64bits_withSeed_dispatch(data, length, seed)
        #else
        XXH3_64bits_withSeed(data, length, seed)
        #endif
    }
}
