import BlurfarmCore
import BlurfarmDetection
import BlurfarmTestSupport
import PropertyBased
import Testing

@testable import BlurfarmCoordinator

/// The tiles a large image is searched in (``DetectionSchedule``) and how their boxes are
/// merged (`PhotoSearch`): the halo argument of the farm's tiles, for detection.
@Suite struct DetectionScheduleTests {
    /// Every square of the overlap's side lies whole in some tile, and the tiles stay inside
    /// the scaled photo, at most a tile's side: so a face up to the overlap is seen whole by a tile.
    @Test func everyObjectUpToTheOverlapLiesWholeInSomeTile() async {
        await propertyCheck(
            count: 300, input: Gen.int(in: 1...9000), Gen.int(in: 1...9000), Gen.int(in: 0...100_000), Gen.int(in: 0...100_000)
        ) { width, height, u, v in
            let schedule = DetectionSchedule.standard
            let tiles = schedule.tiles(width: width, height: height)
            let image = Rect(width: width, height: height)
            for tile in tiles {
                #expect(image.contains(tile) && tile.width <= schedule.tileSide && tile.height <= schedule.tileSide)
            }
            let side = min(schedule.overlap, width, height)
            let square = Rect(x: u % (width - side + 1), y: v % (height - side + 1), width: side, height: side)
            #expect(tiles.contains { $0.contains(square) }, "\(square) of \(width)x\(height) is whole in no tile")
        }
    }

    @Test func aPhotoIsSearchedWholeUpToItsSideThenScaledThenTiled() {
        let schedule = DetectionSchedule.standard
        // Up to 1024 px: once at full size.
        #expect(schedule.plan(width: 1024, height: 700) == .whole(.init(1024, 700)))
        // Up to 2560 px: once at 0.6 of its size, where a 20 px face is 12 px.
        #expect(schedule.plan(width: 1700, height: 1133) == .whole(.init(1020, 680)))
        #expect(schedule.plan(width: 2560, height: 1707) == .whole(.init(1536, 1024)))
        // 24 MP: at 0.6 (3600 x 2400) in 3 x 2 tiles of 1312 x 1280, and whole made 675 x 450,
        // where a face of the tiles' overlap (128 px at 0.6: 213 px) is 24 px.
        let plan = schedule.plan(width: 6000, height: 4000)
        #expect(plan == .tiled(whole: .init(675, 450), scaled: .init(3600, 2400)))
        let tiles = schedule.tiles(width: 3600, height: 2400)
        #expect(tiles.count == 3 * 2 && tiles.allSatisfy { $0.width == 1312 && $0.height == 1280 })
        // 10.4 megapixels through the network (the tiles 10.1, the whole pass 0.3): 43% of a
        // search at full size.
        #expect(schedule.networkPixels(plan) == 6 * 1312 * 1280 + 675 * 450)
    }

    /// As many photos at once as the farm has workers, each on its share of the cores: one
    /// thread each when there are photos enough, every core for a photo alone, and never
    /// more threads in all than the cores.
    @Test func photosAreDetectedOnePerWorkerOrAloneOnEveryCore() async {
        #expect(DetectedRegions.split(parallelism: 2, photos: 8) == (2, 1))
        #expect(DetectedRegions.split(parallelism: 2, photos: 1) == (1, 2))
        #expect(DetectedRegions.split(parallelism: 8, photos: 3) == (3, 2))
        await propertyCheck(count: 200, input: Gen.int(in: 1...64), Gen.int(in: 1...1000)) { parallelism, photos in
            let (atOnce, threadsEach) = DetectedRegions.split(parallelism: parallelism, photos: photos)
            #expect(atOnce == min(parallelism, photos) && threadsEach >= 1 && atOnce * threadsEach <= parallelism)
        }
    }

    /// A box touching a tile's edge inside the image is cut (its tile holds part of it); at
    /// the image's own edge it is whole.
    @Test func aBoxAtATilesInnerEdgeIsCutAtTheImagesEdgeItIsNot() {
        let image = Rect(width: 3000, height: 2000)
        let tile = Rect(x: 768, y: 0, width: 1024, height: 1024)  // a tile of a scaled photo
        func box(_ x: Double, _ y: Double) -> DetectedBox { DetectedBox(x: x, y: y, width: 40, height: 40, score: 0.9) }
        #expect(PhotoSearch.isCut(box(768, 100), by: tile, in: image))  // the left edge, inside the image
        #expect(PhotoSearch.isCut(box(1760, 100), by: tile, in: image))  // the right edge
        #expect(PhotoSearch.isCut(box(900, 990), by: tile, in: image))  // the bottom edge
        #expect(!PhotoSearch.isCut(box(900, 0), by: tile, in: image))  // the top: the image's edge
        #expect(!PhotoSearch.isCut(box(900, 500), by: tile, in: image))
    }

    /// Suppression keeps the better of two boxes overlapping by an IoU of 0.3 or more, both of
    /// two that overlap less, and boxes above a threshold are the same whether suppressed
    /// among every box or among those above it (why boxes are cached down to the lowest).
    @Test func suppressionKeepsTheBetterBoxAndCommutesWithAThreshold() async {
        let a = DetectedBox(x: 0, y: 0, width: 100, height: 100, score: 0.9)
        let b = DetectedBox(x: 20, y: 0, width: 100, height: 100, score: 0.8)  // IoU 80/120
        let c = DetectedBox(x: 70, y: 0, width: 100, height: 100, score: 0.95)  // IoU with a 30/170
        #expect(PhotoSearch.suppressed([a, b]) == [a])
        #expect(PhotoSearch.suppressed([b, a]) == [a])
        #expect(PhotoSearch.suppressed([a, c]) == [c, a])
        await propertyCheck(count: 100, input: Gen.uint64(), Gen.int(in: 1...90)) { seed, percent in
            var rng = SplitMix(seed: seed)
            let boxes = (0..<30).map { _ in
                DetectedBox(
                    x: Double(rng.next() % 300), y: Double(rng.next() % 300), width: Double(10 + rng.next() % 80),
                    height: Double(10 + rng.next() % 80), score: Double(rng.next() % 1000) / 1000)
            }
            let threshold = Double(percent) / 100
            #expect(
                PhotoSearch.suppressed(boxes).filter { $0.score >= threshold }
                    == PhotoSearch.suppressed(boxes.filter { $0.score >= threshold }))
        }
    }
}

