import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// What the command says: help texts that read as paragraphs at any width, one prefix on every
/// error line, counts in the singular when there is one (issue 10, defect 7).
@Suite(.tags(.process), .blocking) struct MessageTests {
    /// Every command's help, as `blurfarm COMMAND --help` prints it.
    static let commands: [[String]] = [[], ["apply"], ["check"], ["run"], ["filters"], ["bench"]]

    /// The lines of `text` where a paragraph was broken too early: a line at the left margin
    /// that continues the line before it (starts with a small letter) though its first word
    /// would have fitted there, or that follows an indented line (text wrapped out of its
    /// column). The argument parser leaves the last column free: lines hold `width - 1`.
    static func raggedLines(_ text: String, width: Int) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var ragged: [String] = []
        for (previous, line) in zip(lines, lines.dropFirst()) where !line.isEmpty && !previous.isEmpty {
            guard let first = line.first, first != " " else { continue }
            if previous.hasPrefix(" ") {
                ragged.append("\(previous)⏎\(line)")
            } else if first.isLowercase, let word = line.split(separator: " ").first,
                previous.count + 1 + word.count <= width - 1
            {
                ragged.append("\(previous)⏎\(line)")
            }
        }
        return ragged
    }

    @Test(arguments: commands)
    func helpIsWrappedAsParagraphsAt80And132Columns(command: [String]) throws {
        for width in [80, 132] {
            let help = try Blurfarm.run(command + ["--help"], environment: ["COLUMNS": "\(width)"])
            #expect(help.status == 0, "\(help.stderr)")
            #expect(help.stdout.contains("USAGE: blurfarm"), "\(help.stdout)")
            #expect(Self.raggedLines(help.stdout, width: width).isEmpty, "\(width) columns: \(help.stdout)")
            // The usage line is the parser's own, not wrapped.
            #expect(
                help.stdout.split(separator: "\n").allSatisfy { $0.count <= width || $0.hasPrefix("USAGE:") },
                "\(help.stdout)")
        }
    }

    @Test func theRaggedCheckFindsAHardWrappedParagraph() {
        let text = "Parses and validates each manifest and the configuration, expands the inputs,\nand\nprints the plan."
        #expect(Self.raggedLines(text, width: 80).count == 1)
        #expect(Self.raggedLines("  an indented item that was too long for its\ncolumn", width: 80).count == 1)
        #expect(Self.raggedLines("A whole paragraph\n\nAnother one", width: 80).isEmpty)
    }

    @Test func theOverviewAndApplyNameEveryKindOfFilter() throws {
        for command in [[], ["apply"]] {
            let help = try Blurfarm.run(command + ["--help"]).stdout
            for word in ["gaussian", "motion", "frost", "plugin"] {
                #expect(help.contains(word), "\(command): \(word) missing from \(help)")
            }
        }
    }

    @Test func aMissingManifestOrConfigurationIsNamedWithTheProgramsPrefix() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for arguments in [["run", "nope.job"], ["check", "nope.job"], ["run", "nope.job", "--config", "nope.conf"]] {
            let result = try Blurfarm.run(arguments, in: folder)
            let missing = arguments.last!
            #expect(result.status == 2)
            #expect(
                result.stderr.hasPrefix("blurfarm: error: cannot read '\(missing)': No such file or directory\n"),
                "\(result.stderr)")
        }
    }

    /// A manifest named with one character (`blurfarm check j`) is read, checked and run, in
    /// the working folder and beside it: Foundation's path functions stopped the process on it.
    @Test func aManifestOfOneCharacterIsCheckedAndRun() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("photos"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.corpus("photos/mate-Aqua.jpg"), toPath: folder.appendingPathComponent("photos/k.jpg").path)
        try Self.oneJob(inputs: "photos/*.jpg").write(to: folder.appendingPathComponent("é"), atomically: true, encoding: .utf8)
        for arguments in [["check", "é"], ["check", "./é"], ["run", "é", "--quiet"]] {
            let result = try Blurfarm.run(arguments, in: folder, environment: ["XDG_STATE_HOME": folder.appendingPathComponent("state").path])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/k.png").path))
    }

    /// Job `one`: the inputs of `inputs` blurred (σ 1) to `out/{stem}.png`.
    static func oneJob(inputs: String) -> String {
        """
        job: one
        inputs: [\(inputs)]
        outputs:
          - name: blur
            path: out/{stem}.png
            filters:
              - gaussian:
                  sigma: 1

        """
    }

    @Test func oneInputAndOneTileAreSingular() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var random = SplitMix(seed: 3)
        try IncrementalRunTests.ppm(width: 24, height: 16, using: &random)
            .write(to: folder.appendingPathComponent("in.ppm"))
        try "state: state\n".write(to: folder.appendingPathComponent("farm.conf"), atomically: true, encoding: .utf8)
        try Self.oneJob(inputs: "in.ppm").write(to: folder.appendingPathComponent("one.job"), atomically: true, encoding: .utf8)
        let check = try Blurfarm.run(["check", "one.job", "--config", "farm.conf"], in: folder)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("job 'one': 1 input, 1 output, "), "\(check.stdout)")
        #expect(check.stdout.contains("; 1 tile\n"), "\(check.stdout)")
        let run = try Blurfarm.run(["run", "one.job", "--config", "farm.conf", "--verbose", "--workers", "0"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("blur of in.ppm, 1 tile\n"), "\(run.stdout)")
        #expect(run.stdout.contains("one: 1 written, 0 failed, 1 input, in "), "\(run.stdout)")
    }

    /// A file that is not an image is not counted as decoded; `--region` takes a box off the
    /// left edge as written (`--region -20,10,100,100`, not only `--region=-20,…`); `check
    /// --status` shows every path as the working folder sees it: relative below it, `..`
    /// taken out (a manifest named as `jobs/../one.job`), pruned outputs and their inputs too.
    @Test func countsRegionsAndPathsReadAsMeant() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var random = SplitMix(seed: 3)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("in"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("jobs"), withIntermediateDirectories: true)
        for name in ["a", "b"] {
            try IncrementalRunTests.ppm(width: 24, height: 16, using: &random).write(to: folder.appendingPathComponent("in/\(name).ppm"))
        }
        try Data("not an image".utf8).write(to: folder.appendingPathComponent("in/c.ppm"))
        try "state: state\n".write(to: folder.appendingPathComponent("farm.conf"), atomically: true, encoding: .utf8)
        try Self.oneJob(inputs: "in/*.ppm").write(to: folder.appendingPathComponent("one.job"), atomically: true, encoding: .utf8)
        let run = try Blurfarm.run(["run", "one.job", "--config", "farm.conf", "--verbose", "--workers", "0"], in: folder)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stdout.contains(", 2 decoded"), "\(run.stdout)")

        let region = try Blurfarm.run(
            ["apply", "in/a.ppm", "a.png", "--filter", "gaussian sigma=2", "--region", "-20,10,100,100"], in: folder)
        #expect(region.status == 0, "\(region.stderr)")

        try FileManager.default.removeItem(at: folder.appendingPathComponent("in/b.ppm"))
        try FileManager.default.removeItem(at: folder.appendingPathComponent("out/a.png"))
        let status = try Blurfarm.run(["check", "jobs/../one.job", "--config", "farm.conf", "--status"], in: folder)
        let lines = status.stdout.split(separator: "\n").dropFirst()
        #expect(lines.contains { $0.contains("missing          out/a.png (blur of in/a.ppm)") }, "\(status.stdout)")
        #expect(lines.contains { $0.contains("would be pruned  out/b.png (of in/b.ppm)") }, "\(status.stdout)")
        #expect(!status.stdout.contains(folder.path) && !status.stdout.contains("../"), "\(status.stdout)")
    }

    @Test func versionNamesBlurfarmLibvipsAndTheCPUTarget() throws {
        let result = try Blurfarm.run(["--version"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(result.stdout)")
        #expect(lines.first?.range(of: #"^blurfarm \d+\.\d+\.\d+$"#, options: .regularExpression) != nil, "\(lines)")
        #expect(lines.dropFirst().first == "libvips \(ImageReader.libvipsVersion)", "\(lines)")
        // This machine's libvips has libheif with an AV1 encoder (`vips copy x.jpg y.avif` works).
        #expect(lines.dropFirst(2).first == "avif-output yes", "\(lines)")
        #expect(["cpu-target x86-64-v3", "cpu-target baseline"].contains(lines.last ?? ""), "\(lines)")
        #if arch(x86_64)
        // The tests are built as blurfarm is: for x86-64-v3 unless BLURFARM_BASELINE_CPU is set.
        if ProcessInfo.processInfo.environment["BLURFARM_BASELINE_CPU"] == nil {
            #expect(lines.last == "cpu-target x86-64-v3")
        }
        #endif
    }
}
