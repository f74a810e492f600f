/// How a kernel's loops run. Every schedule computes each output value by the same
/// arithmetic in the same order, so they agree bit for bit; the reference exists to check
/// the fast one against obvious code.
public enum KernelSchedule: String, CaseIterable, Sendable {
    /// One pixel at a time, whole passes over the tile: obvious code, slow.
    case reference
    /// Strips of rows that stay in cache, eight pixels at a time in registers.
    case vectorized

    /// The schedule the engine uses unless told otherwise.
    public static let `default` = KernelSchedule.vectorized
}
