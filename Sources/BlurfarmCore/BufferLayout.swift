/// The layout that ``PixelBuffer`` and ``SampleBuffer`` share: interleaved channels, rows
/// `rowStride` values apart, starting `offset` values into their storage.
enum BufferLayout {
    /// The row stride in values (`rowStride`, or packed rows when `nil`) after checking that
    /// `rect` fits in `byteCount` bytes of values of `valueSize` bytes.
    static func checkedRowStride(
        rect: Rect, channels: Int, rowStride: Int?, offset: Int, valueSize: Int, byteCount: Int
    ) -> Int {
        let stride = rowStride ?? rect.width * channels
        precondition(stride >= rect.width * channels && offset >= 0)
        precondition(
            rect.isEmpty || (offset + stride * (rect.height - 1) + rect.width * channels) * valueSize <= byteCount,
            "buffer of \(rect) runs past its storage")
        return stride
    }

    /// The offset in values of the pixel at `subrect`'s origin, for a view of a buffer of
    /// `rect` whose origin lies at `offset`; `subrect` must lie inside `rect`.
    static func offset(of subrect: Rect, in rect: Rect, offset: Int, rowStride: Int, channels: Int) -> Int {
        precondition(rect.contains(subrect), "view \(subrect) lies outside \(rect)")
        return offset + (subrect.y - rect.y) * rowStride + (subrect.x - rect.x) * channels
    }
}
