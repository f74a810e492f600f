/// Cuts an output rectangle into tiles that cover it exactly once.
///
/// Tiles are `tileSize` × `tileSize` pixels from the rectangle's top-left corner, the last
/// row and column cut short by the rectangle's edge. A `tileSize` of 0 means one tile.
public struct TileGrid: Sendable {
    /// The output rectangle being cut.
    public let bounds: Rect
    /// The side of a tile in pixels; 0 means the whole rectangle is one tile.
    public let tileSize: Int

    public init(bounds: Rect, tileSize: Int) {
        precondition(tileSize >= 0, "a tile size is never negative")
        self.bounds = bounds
        self.tileSize = tileSize
    }

    private var step: (x: Int, y: Int) {
        tileSize == 0 ? (max(bounds.width, 1), max(bounds.height, 1)) : (tileSize, tileSize)
    }

    /// Tiles across and down.
    public var columns: Int { bounds.isEmpty ? 0 : (bounds.width + step.x - 1) / step.x }
    public var rows: Int { bounds.isEmpty ? 0 : (bounds.height + step.y - 1) / step.y }
    public var count: Int { columns * rows }

    /// The tiles in row order.
    public var tiles: [Rect] {
        var result: [Rect] = []
        result.reserveCapacity(count)
        let (sx, sy) = step
        for row in 0..<rows {
            for column in 0..<columns {
                let x = bounds.x + column * sx, y = bounds.y + row * sy
                result.append(
                    Rect(x: x, y: y, width: min(sx, bounds.maxX - x), height: min(sy, bounds.maxY - y)))
            }
        }
        return result
    }
}
