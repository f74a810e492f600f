/// How far a filter reads beyond the pixel it computes, in pixels, on each axis.
///
/// A filter with reach `(x: 3, y: 1)` computes the pixel at `(px, py)` from the input
/// pixels in columns `px - 3 ... px + 3` and rows `py - 1 ... py + 1`. A chain's reach is
/// the sum of its filters' reaches.
public struct Reach: Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int

    public init(x: Int, y: Int) {
        precondition(x >= 0 && y >= 0, "a reach is never negative")
        self.x = x
        self.y = y
    }

    public static let zero = Reach(x: 0, y: 0)

    public static func + (a: Reach, b: Reach) -> Reach { Reach(x: a.x + b.x, y: a.y + b.y) }

    public var description: String { x == y ? "\(x) px" : "\(x)x\(y) px" }
}
