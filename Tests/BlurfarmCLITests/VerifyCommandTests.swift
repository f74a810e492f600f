import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// `verify: decode` through `blurfarm run`: outputs with translucent pixels in every lossless
/// format, at 8 and 16 bits, check and are written.
@Suite(.tags(.process), .blocking) struct VerifyCommandTests {
    static let manifest = """
        job: translucent
        inputs: [photos/**/*.png]
        verify: decode
        outputs:
          - name: png
            path: out/{stem}.png
            resize:
              width: 300
            filters:
              - gaussian:
                  sigma: 3
            edge: transparent
          - name: tiff
            path: out/{stem}.tif
            resize:
              width: 300
            filters:
              - gaussian:
                  sigma: 3
            edge: grow
          - name: webp
            path: out/{stem}.webp
            lossless: true
            resize:
              width: 300
            filters:
              - gaussian:
                  sigma: 3
            edge: grow

        """

    @Test func translucentLosslessOutputsPassTheDecodeCheck() throws {
        let folder = try JobCommandTests.makeJob(
            Self.manifest, photos: ["special/alpha-garbage-under-transparent.png", "special/deep-16bit.png"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Blurfarm.run(["run", folder.appendingPathComponent("job.job").path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("translucent: 6 written, 0 failed"), "\(result.stdout)")
        for stem in ["alpha-garbage-under-transparent", "deep-16bit"] {
            for ext in ["png", "tif", "webp"] {
                let header = try ImageReader.header(ofFile: folder.appendingPathComponent("out/\(stem).\(ext)").path)
                #expect(header.hasAlpha, "\(stem).\(ext) has no alpha: nothing translucent was checked")
            }
        }
    }
}
