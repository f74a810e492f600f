import BlurfarmTestSupport
import Foundation
import Testing

/// Bad input: one clear line naming the file and the problem, a non-zero exit, no output
/// written, and an existing output left as it was.
@Suite(.tags(.process), .blocking) struct BadInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let input: String
        let filter: String
        let extra: [String]
        /// Text the error line must contain (besides the input's or output's path).
        let expected: [String]
        let testDescription: String

        init(_ name: String, input: String, filter: String = "gaussian sigma=2", extra: [String] = [], expected: [String]) {
            self.name = name
            self.input = input
            self.filter = filter
            self.extra = extra
            self.expected = expected
            testDescription = name
        }
    }

    static let cases: [Case] = [
        Case("missing file", input: "/nonexistent/photo.jpg", expected: ["/nonexistent/photo.jpg"]),
        Case("truncated JPEG", input: Fixtures.corpus("special/truncated.jpg"), expected: ["truncated.jpg"]),
        Case("text named .png", input: Fixtures.corpus("special/not-an-image.png"), expected: ["not-an-image.png"]),
        Case(
            "over the pixel limit", input: Fixtures.corpus("special/kite.webp"), extra: ["--pixel-limit", "1000"],
            expected: ["kite.webp", "limit"]),
        Case("unknown filter", input: Fixtures.corpus("special/kite.webp"), filter: "gausian sigma=2",
            expected: ["unknown filter 'gausian'", "did you mean 'gaussian'"]),
        Case("negative sigma", input: Fixtures.corpus("special/kite.webp"), filter: "gaussian sigma=-3",
            expected: ["'sigma' must be a number > 0"]),
        Case("unknown parameter", input: Fixtures.corpus("special/kite.webp"), filter: "gaussian sigam=3",
            expected: ["unknown parameter 'sigam'", "did you mean 'sigma'"]),
    ]

    @Test(arguments: cases)
    func badInputWritesNothingAndKeepsTheOldOutput(_ c: Case) throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.jpg")
        let previous = Data("the previous output".utf8)
        try previous.write(to: output)
        let result = try Blurfarm.run(["apply", c.input, output.path, "--filter", c.filter] + c.extra)
        #expect(result.status != 0)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "expected one line, got: \(result.stderr)")
        for text in c.expected { #expect(result.stderr.contains(text), "\(result.stderr)") }
        #expect(try Data(contentsOf: output) == previous)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out.jpg"])
    }

    @Test func outputFolderThatDoesNotExist() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("missing/out.jpg").path
        let result = try Blurfarm.run(["apply", Fixtures.corpus("special/kite.webp"), output, "--filter", "gaussian sigma=2"])
        #expect(result.status != 0)
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(output), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("missing").path))
    }

    @Test func outputFolderThatCannotBeWritten() throws {
        // /proc refuses new files even to root, so this holds in CI too.
        let output = "/proc/blurfarm-test-out.jpg"
        let result = try Blurfarm.run(["apply", Fixtures.corpus("special/kite.webp"), output, "--filter", "gaussian sigma=2"])
        #expect(result.status != 0)
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(output), "\(result.stderr)")
    }

    @Test func unsupportedOutputExtension() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.bmpx").path
        let result = try Blurfarm.run(["apply", Fixtures.corpus("special/kite.webp"), output, "--filter", "gaussian sigma=2"])
        #expect(result.status != 0 && result.stderr.contains("out.bmpx"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }
}
