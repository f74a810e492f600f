/// An axis-aligned rectangle of whole pixels in image coordinates (x to the right, y down).
///
/// `x`/`y` are the top-left corner; the rectangle covers columns `x ..< x + width`
/// and rows `y ..< y + height`. A rectangle with zero width or height is empty.
public struct Rect: Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        precondition(width >= 0 && height >= 0, "a rectangle has no negative size")
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The rectangle `(0, 0, width, height)`.
    public init(width: Int, height: Int) {
        self.init(x: 0, y: 0, width: width, height: height)
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var isEmpty: Bool { width == 0 || height == 0 }
    public var area: Int { width * height }

    /// The rectangle grown by `dx` columns on the left and right and `dy` rows on top and bottom.
    public func grown(dx: Int, dy: Int) -> Rect {
        Rect(x: x - dx, y: y - dy, width: max(0, width + 2 * dx), height: max(0, height + 2 * dy))
    }

    /// The overlap of two rectangles, empty (at this rectangle's origin) when they do not meet.
    public func intersection(_ other: Rect) -> Rect {
        let x0 = max(x, other.x), y0 = max(y, other.y)
        let x1 = min(maxX, other.maxX), y1 = min(maxY, other.maxY)
        guard x1 > x0, y1 > y0 else { return Rect(x: x, y: y, width: 0, height: 0) }
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// The smallest rectangle holding both (an empty one adds nothing).
    public func union(_ other: Rect) -> Rect {
        if other.isEmpty { return self }
        if isEmpty { return other }
        let x0 = min(x, other.x), y0 = min(y, other.y)
        return Rect(x: x0, y: y0, width: max(maxX, other.maxX) - x0, height: max(maxY, other.maxY) - y0)
    }

    /// Whether `other` lies wholly inside this rectangle (an empty rectangle lies inside any).
    public func contains(_ other: Rect) -> Bool {
        other.isEmpty || (other.x >= x && other.y >= y && other.maxX <= maxX && other.maxY <= maxY)
    }

    public func contains(x px: Int, y py: Int) -> Bool {
        px >= x && px < maxX && py >= y && py < maxY
    }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}
