import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// `check JOB --sheet FOLDER` (docs/privacy.md, "Reviewing"): a page with every photo whose
/// regions come from a file, its boxes drawn with their scores, the ones to look at first
/// (failing, published unredacted, without a box) first; looked at in headless Chromium, whose
/// screenshot shows the boxes.
@Suite(.tags(.process, .browser), .blocking) struct ReviewSheetTests {
    @Test func theSheetShowsEachPhotosBoxesAndListsTheUrgentFirst() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        // a: a box (a score of 0.97) over the middle; b: no file (missing: skip); c: an empty
        // file (nothing found); d: a file measured on the stored pixels of a turned photo (fails).
        for (name, source) in [("a", "photos/mate-GreenMeadow.jpg"), ("b", "photos/mate-Aqua.jpg"), ("c", "photos/mate-Storm.jpg"), ("d", "special/exif-orientation-6.jpg")] {
            try FileManager.default.copyItem(atPath: Fixtures.corpus(source), toPath: photos.appendingPathComponent("\(name).jpg").path)
        }
        let a = try ImageReader.header(ofFile: photos.appendingPathComponent("a.jpg").path)
        try #"{"width": \#(a.width), "height": \#(a.height), "boxes": [{"x": \#(a.width / 4), "y": \#(a.height / 4), "width": \#(a.width / 2), "height": \#(a.height / 2), "score": 0.97, "label": "face"}]}"#
            .write(to: photos.appendingPathComponent("a.faces.json"), atomically: true, encoding: .utf8)
        let c = try ImageReader.header(ofFile: photos.appendingPathComponent("c.jpg").path)
        try #"{"width": \#(c.width), "height": \#(c.height), "boxes": []}"#
            .write(to: photos.appendingPathComponent("c.faces.json"), atomically: true, encoding: .utf8)
        let d = try ImageReader.header(ofFile: photos.appendingPathComponent("d.jpg").path)
        try #"{"width": \#(d.height), "height": \#(d.width), "boxes": [{"x": 1, "y": 1, "width": 9, "height": 9}]}"#
            .write(to: photos.appendingPathComponent("d.faces.json"), atomically: true, encoding: .utf8)
        try """
            job: faces
            inputs: [photos/*.jpg]
            outputs:
              - name: published
                path: out/{stem}.jpg
                filters:
                  - redact
                regions:
                  from: "{stem}.faces.json"
                  shape: ellipse
                  missing: skip

            """.write(to: folder.appendingPathComponent("faces.job"), atomically: true, encoding: .utf8)
        try "state: state\n".write(to: folder.appendingPathComponent("farm.conf"), atomically: true, encoding: .utf8)
        let sheet = folder.appendingPathComponent("sheet")
        let check = try Blurfarm.run(["check", "faces.job", "--config", "farm.conf", "--sheet", sheet.path], in: folder)
        #expect(check.status == 1, "d fails: \(check.stderr)")
        #expect(check.stderr.contains("review sheet: \(sheet.path)/index.html: 4 photos, 3 to look at first"), "\(check.stderr)")

        // The order: the failing photo, the unredacted one, the one without a box, then boxes.
        let html = try String(contentsOf: sheet.appendingPathComponent("index.html"), encoding: .utf8)
        let order = ["photos/d.jpg", "photos/b.jpg", "photos/c.jpg", "photos/a.jpg"].map { html.range(of: "<b>\($0)</b>")?.lowerBound }
        #expect(order.allSatisfy { $0 != nil } && order.map { $0! } == order.map { $0! }.sorted(), "\(html)")
        #expect(html.contains("the stored pixels of a photo shown \(d.width)x\(d.height)"))
        #expect(html.components(separatedBy: "class=\"box\"").count == 2 && html.contains("<span>0.97</span>"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: sheet.appendingPathComponent("thumbs").path).count == 4)

        // In Chromium: the screenshot shows a's box, magenta, in the last card (the right one).
        let shot = folder.appendingPathComponent("sheet.png")
        let chromium = try Blurfarm.run(
            ["-c", "exec chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1500,700 --screenshot=\"$0\" \"$1\" 2>/dev/null",
             shot.path, "file://" + sheet.appendingPathComponent("index.html").path], shell: true)
        #expect(chromium.status == 0, "\(chromium.stderr)")
        let pixels = try ImageReader.read(shot.path).pixels
        var magenta: [Int] = []
        for y in 0..<pixels.rect.height {
            for x in 0..<pixels.rect.width {
                let p = pixels[x, y]
                if p.x > 0.9, p.y < 0.15, p.z > 0.9 { magenta.append(x) }
            }
        }
        // The box's outline: 3 px on a 160 x 100 px rectangle or so.
        #expect(magenta.count > 600, "\(magenta.count) magenta pixels")
        #expect((magenta.min() ?? 0) > 1000, "the box is not in the fourth card: leftmost magenta at \(magenta.min() ?? -1)")
    }
}
