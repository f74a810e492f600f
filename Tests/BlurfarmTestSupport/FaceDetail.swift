import BlurfarmCore

/// The mean |Laplacian| of `image`'s crop `box` brought to 48 × 48 (each pixel the mean of
/// the crop's pixels in its share of the crop, at least one: a crop smaller than 48 is
/// enlarged by repeating pixels): the detail left at the face's own scale.
public func faceDetail(_ image: PixelBuffer, _ box: Rect) -> Double {
    let n = 48
    func span(_ i: Int, _ extent: Int) -> Range<Int> {
        let start = i * extent / n
        return start..<max(start + 1, (i + 1) * extent / n)
    }
    var small = [Double](repeating: 0, count: n * n)
    for j in 0..<n {
        for i in 0..<n {
            var sum = 0.0, count = 0.0
            for y in span(j, box.height) {
                for x in span(i, box.width) {
                    let p = image[box.x + x, box.y + y]
                    sum += Double(p.x + p.y + p.z) / 3
                    count += 1
                }
            }
            small[j * n + i] = sum / count
        }
    }
    var sum = 0.0
    for y in 1..<(n - 1) {
        for x in 1..<(n - 1) {
            let c = small[y * n + x]
            sum += abs(small[(y - 1) * n + x] + small[(y + 1) * n + x] + small[y * n + x - 1] + small[y * n + x + 1] - 4 * c)
        }
    }
    return sum / Double((n - 2) * (n - 2))
}
