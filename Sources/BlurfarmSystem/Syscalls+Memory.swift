// The memory mappings of BlurfarmCore's `PixelStorage`: large pixel blocks straight from the
// kernel, aligned for huge pages.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Syscalls {
    /// `byteCount` zeroed bytes from the kernel (a private anonymous mapping), their start
    /// aligned to `alignment` bytes (the mapping is that much larger) and advised for
    /// transparent huge pages (a hint: without them it still works); nil when the system has
    /// no memory for them. `release`, given that start, unmaps the whole mapping.
    package static func mapZeroedMemory(
        byteCount: Int, alignment: Int
    ) -> (start: UnsafeMutableRawPointer, release: @Sendable (UnsafeMutableRawPointer) -> Void)? {
        let mapped = byteCount + alignment
        guard let region = mmap(nil, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            region != MAP_FAILED
        else { return nil }
        let misalignment = Int(bitPattern: region) % alignment
        let aligned = region + (misalignment == 0 ? 0 : alignment - misalignment)
        _ = madvise(aligned, byteCount, MADV_HUGEPAGE)
        let offset = aligned - region
        return (aligned, { start in _ = munmap(start - offset, mapped) })
    }
}
