import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// `blurfarm apply --region` and `--invert-regions`: the manifest's rectangles on one image,
/// the same bytes in this process and in workers, the source outside them.
@Suite(.tags(.process), .blocking) struct ApplyRegionTests {
    @Test func regionsFilterOnlyTheirPixelsAndInvertFiltersTheRest() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = Fixtures.corpus("special/display-p3.jpg")
        func apply(_ name: String, _ arguments: [String]) throws -> PixelBuffer {
            let output = folder.appendingPathComponent(name).path
            let result = try Blurfarm.run(["apply", input, output, "--filter", "gaussian sigma=5"] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return try ImageReader.read(output).pixels
        }
        let source = try ImageReader.read(input).pixels
        let whole = try apply("whole.png", ["--workers", "0"])
        let regions = ["--region", "10%,60%,80%,30%,24,3", "--region=-20,-20,200,100"]
        let mask = RegionMask(regions: [
            Region(x: .percent(10), y: .percent(60), width: .percent(80), height: .percent(30), cornerRadius: 24, feather: 3),
            Region(x: .pixels(-20), y: .pixels(-20), width: .pixels(200), height: .pixels(100)),
        ])
        let inProcess = try apply("a.png", regions + ["--workers", "0"])
        let inWorkers = try apply("b.png", regions + ["--workers", "2", "--tile", "45"])
        #expect(inProcess.isBitIdentical(to: inWorkers))
        let inverted = try apply("c.png", regions + ["--invert-regions", "--workers", "2"])
        var seen = (source: 0, filtered: 0)
        for y in 0..<source.rect.height {
            for x in 0..<source.rect.width {
                let c = mask.coverage(x: x, y: y, in: source.rect)
                guard c == 0 || c == 1 else { continue }
                let (kept, filtered) = c == 0 ? (inProcess, inverted) : (inverted, inProcess)
                guard kept[x, y] == source[x, y], filtered[x, y] == whole[x, y] else {
                    Issue.record("(\(x), \(y)), coverage \(c): not the source where unfiltered and the blur where filtered")
                    return
                }
                if c == 0 { seen.source += 1 } else { seen.filtered += 1 }
            }
        }
        #expect(seen.source > 10_000 && seen.filtered > 10_000, "\(seen)")
    }

    @Test func badRegionsAreRefusedInWords() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = Fixtures.corpus("special/display-p3.jpg"), output = folder.appendingPathComponent("o.png").path
        for (arguments, message) in [
            (["--filter", "gaussian", "--region", "1,2,0,4"], "--region '1,2,0,4': width must be > 0"),
            (["--filter", "gaussian", "--region", "1,2,x,4"], "--region '1,2,x,4': width 'x' is not a number of pixels or a percentage"),
            // Numbers as a manifest writes them: not `.5`, `0x10` or `inf`.
            (["--filter", "gaussian", "--region", ".5,2,3,4"], "--region '.5,2,3,4': x '.5' is not a number of pixels or a percentage"),
            (["--filter", "gaussian", "--region", "1,0x10,3,4"], "--region '1,0x10,3,4': y '0x10' is not a number of pixels or a percentage"),
            (["--filter", "gaussian", "--region", "1,2,3,4,0,inf"], "--region '1,2,3,4,0,inf': the feather 'inf' is not a number of pixels >= 0"),
            (["--filter", "gaussian", "--region", "1,2,3"], "--region '1,2,3': expected x,y,width,height with an optional corner radius and feather, e.g. 10%,70%,80%,20%,24"),
            (["--filter", "gaussian", "--region", "1,2,3,4,-1"], "--region '1,2,3,4,-1': the corner radius '-1' is not a number of pixels >= 0"),
            (["--filter", "gaussian", "--invert-regions"], "--invert-regions needs --region or --regions"),
            (["--region", "1,2,3,4"], "--region says where the filters apply: give one with --filter"),
            (["--filter", "gaussian", "--edge", "grow", "--region", "1,2,3,4"],
             "--region cannot be used with --edge grow (the output is larger than the image the regions are placed on)"),
        ] {
            let result = try Blurfarm.run(["apply", input, output, "--workers", "0"] + arguments)
            #expect(result.status == 1 && result.stderr == "blurfarm: error: \(message)\n", "\(arguments): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }
}
