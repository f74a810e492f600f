/// How a job's outputs are checked before they count as done.
public enum VerifyMode: String, CaseIterable, Hashable, Sendable {
    /// Each tile's checksum, computed by its worker, is checked after stitching (the default).
    case checksum
    /// As `checksum`, and the written file is decoded again and compared with the rendered
    /// pixels (exactly for lossless formats; size and a PSNR floor for lossy ones).
    case decode
    /// As `decode`, and the image is also rendered untiled in one pass: the output must be
    /// bit-identical (the tile-invariance guarantee, checked for real; slow).
    case untiled
}
