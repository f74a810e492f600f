/// Unaligned vector loads and stores for the kernels' pointer loops.

@inline(__always)
func load8(_ p: UnsafeMutablePointer<Float>) -> SIMD8<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
}

@inline(__always)
func store8(_ v: SIMD8<Float>, _ p: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD8<Float>.self)
}
