import BlurfarmTestSupport
import Foundation
import Testing

/// `apply INPUT... -o TEMPLATE`: the one-liner, run by the farm, writes what `apply INPUT
/// OUTPUT` writes for each input; inputs that would write one file are refused before anything
/// runs.
@Suite(.tags(.process), .blocking) struct ApplyManyTests {
    /// 20 photos, 10 in `in/a` and 10 in `in/b`, in a fresh folder.
    static func photos() throws -> (folder: URL, inputs: [String]) {
        let folder = try Fixtures.temporaryFolder()
        let batch = Fixtures.corpus("batch1080")
        let names = try FileManager.default.contentsOfDirectory(atPath: batch).filter { $0.hasSuffix(".jpg") }.sorted()
        try #require(names.count >= 20)
        var inputs: [String] = []
        for (k, name) in names.prefix(20).enumerated() {
            let target = folder.appendingPathComponent(k < 10 ? "in/a/\(name)" : "in/b/\(name)")
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: batch + "/" + name, toPath: target.path)
            inputs.append(target.path)
        }
        return (folder, inputs)
    }

    /// One glob blurfarm expands (relative, quoted) and ten absolute paths (as a shell expands
    /// them), through a template: every file the bytes of a single `apply`.
    @Test func twentyInputsWithATemplateEqualTwentySingleApplies() throws {
        let (folder, inputs) = try Self.photos()
        defer { try? FileManager.default.removeItem(at: folder) }
        // With a region, so that -o takes every option of one image (it once dropped --region).
        let options = [
            "--resize", "320", "--filter", "gaussian sigma=2", "--quality", "80", "--region", "10%,20%,50%,40%,8,3",
        ]
        let many = try Blurfarm.run(
            ["apply", "in/a/*.jpg"] + inputs.suffix(10) + ["-o", "out/{stem}-blur.webp", "--workers", "2"] + options,
            in: folder)
        #expect(many.status == 0, "\(many.stderr)")
        #expect(many.stdout.hasPrefix("apply: 20 written, 0 failed, 20 inputs"), "\(many.stdout)")
        #expect(!many.stdout.contains("up to date"), "apply keeps no records: \(many.stdout)")
        let single = folder.appendingPathComponent("single")
        try FileManager.default.createDirectory(at: single, withIntermediateDirectories: true)
        for input in inputs {
            let stem = (input as NSString).lastPathComponent.replacingOccurrences(of: ".jpg", with: "")
            let expected = single.appendingPathComponent("\(stem)-blur.webp").path
            let one = try Blurfarm.run(["apply", input, expected] + options)
            #expect(one.status == 0, "\(one.stderr)")
            let written = try Data(contentsOf: folder.appendingPathComponent("out/\(stem)-blur.webp"))
            #expect(written == (try Data(contentsOf: URL(fileURLWithPath: expected))), "\(stem)")
        }
        let out = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("out").path)
        #expect(out.count == 20, "\(out)")
    }

    /// `{relpath}` below a glob's fixed folder, an absolute glob, and the input's format kept
    /// with `{ext}`.
    @Test func relpathAndExtFollowTheGlob() throws {
        let (folder, _) = try Self.photos()
        defer { try? FileManager.default.removeItem(at: folder) }
        let many = try Blurfarm.run(
            ["apply", folder.path + "/in/**/*.jpg", "-o", "small/{relpath}/{stem}.{ext}", "--resize", "64x64"], in: folder)
        #expect(many.status == 0, "\(many.stderr)")
        for sub in ["a", "b"] {
            let files = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("small/\(sub)").path)
            #expect(files.count == 10 && files.allSatisfy { $0.hasSuffix(".jpg") }, "\(files)")
        }
    }

    /// Two inputs that would write one file: an error naming both, status 2, nothing written.
    @Test func twoInputsWritingOneFileAreRefusedBeforeAnythingRuns() throws {
        let (folder, inputs) = try Self.photos()
        defer { try? FileManager.default.removeItem(at: folder) }
        let twin = folder.appendingPathComponent("in/b/" + (inputs[0] as NSString).lastPathComponent).path
        try FileManager.default.copyItem(atPath: inputs[0], toPath: twin)
        let result = try Blurfarm.run(["apply", "in/**/*.jpg", "-o", "out/{stem}.png"], in: folder)
        #expect(result.status == 2, "\(result.stderr)")
        let name = (inputs[0] as NSString).lastPathComponent
        let stem = name.replacingOccurrences(of: ".jpg", with: "")
        #expect(result.stderr.contains(
            "error: the inputs 'in/a/\(name)' and 'in/b/\(name)' both write 'out/\(stem).png' (variant 'apply'): "
                + "put {relpath} in its path to tell them apart"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path))
    }

    /// Many inputs into one file: one line, not one per pair. Named files with a template that
    /// names no input (`flat/thumb.webp`) are a usage error (64, as commands.md says of a bad
    /// template) suggesting `{stem}`; a glob blurfarm expands into one file is one line counting
    /// them (exit 2), suggesting what the template lacks ({stem}), never a placeholder it has
    /// ({ext}; the twins of the test above get {relpath}).
    @Test func manyInputsIntoOneFileAreOneLine() throws {
        let (folder, inputs) = try Self.photos()
        defer { try? FileManager.default.removeItem(at: folder) }
        let flat = try Blurfarm.run(["apply"] + inputs + ["-o", "flat/thumb.webp"], in: folder)
        #expect(flat.status == 64, "\(flat.stderr)")
        #expect(flat.stderr.split(separator: "\n").count(where: { $0.lowercased().contains("error") }) == 1, "\(flat.stderr)")
        #expect(flat.stderr.contains("-o 'flat/thumb.webp' names one file for \(inputs.count) inputs: put {stem} in it"), "\(flat.stderr)")
        #expect(flat.stderr.contains("-o 'flat/{stem}.webp'"), "\(flat.stderr)")
        // A glob blurfarm expands: the plan finds the 20 inputs writing one file, told in one line.
        let globbed = try Blurfarm.run(["apply", "in/**/*.jpg", "-o", "flat/thumb.{ext}"], in: folder)
        #expect(globbed.status == 2, "\(globbed.stderr)")
        let errors = globbed.stderr.split(separator: "\n").filter { $0.contains("error:") }
        #expect(errors.count == 1, "\(globbed.stderr)")
        #expect(errors.first?.contains("(20 inputs write 1 file between them)") == true, "\(globbed.stderr)")
        #expect(errors.first?.contains("put {stem} in its path") == true && errors.first?.contains("{ext} in") == false, "\(globbed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("flat").path))
    }

    /// A glob that matches nothing names the folder it looked in (status 1, as `run`); a
    /// bad template or format is refused before anything runs (status 2); the single form
    /// still asks for exactly two paths.
    @Test func refusalsAndTheirStatuses() throws {
        let (folder, _) = try Self.photos()
        defer { try? FileManager.default.removeItem(at: folder) }
        let none = try Blurfarm.run(["apply", "in/*.png", "-o", "out/{stem}.png"], in: folder)
        #expect(none.status == 1, "\(none.stderr)")
        #expect(none.stderr.contains("error: the input glob 'in/*.png' matches no file in '\(folder.path)/in'"), "\(none.stderr)")
        let badTemplate = try Blurfarm.run(["apply", "in/a/*.jpg", "-o", "out/{stme}.png"], in: folder)
        #expect(badTemplate.status == 64 && badTemplate.stderr.contains("unknown placeholder '{stme}'"), "\(badTemplate.stderr)")
        let badFormat = try Blurfarm.run(["apply", "in/a/*.jpg", "-o", "out/{stem}.gif"], in: folder)
        #expect(badFormat.status == 2 && badFormat.stderr.contains("cannot write '.gif' files"), "\(badFormat.stderr)")
        let lossless = try Blurfarm.run(["apply", "in/a/*.jpg", "-o", "out/{stem}.jpg", "--lossless"], in: folder)
        #expect(lossless.status == 2, "\(lossless.stderr)")
        let three = try Blurfarm.run(["apply", "a.jpg", "b.jpg", "c.jpg"], in: folder)
        #expect(three.status == 64 && three.stderr.contains("give INPUT OUTPUT for one image"), "\(three.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path))
    }

    /// On a terminal (script(1) gives the command a pseudo-terminal), the progress line `run`
    /// draws; off one, only the summary.
    /// Empty and `.` segments in an input argument are the file the kernel reads (they were
    /// once an invalid glob, dropped without a word); an argument neither a file nor a glob is
    /// refused, naming it.
    @Test func anInputSpelledWithDoubleSlashesOrDotsIsTheFile() throws {
        let (folder, inputs) = try Self.photos()
        defer { try? FileManager.default.removeItem(at: folder) }
        let names = inputs.prefix(2).map { ($0 as NSString).lastPathComponent }
        let result = try Blurfarm.run(
            ["apply", "in//a/" + names[0], "./in/./a//" + names[1], "-o", "out/{stem}.png", "--resize", "64"], in: folder)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("apply: 2 written, 0 failed, 2 inputs"), "\(result.stdout)")
        for name in names {
            let stem = (name as NSString).deletingPathExtension
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/\(stem).png").path))
        }
        let neither = try Blurfarm.run(["apply", "in/a/[x", "-o", "out/{stem}.png"], in: folder)
        #expect(neither.status != 0 && neither.stderr.contains("'in/a/[x' is no file, and not a glob"), "\(neither.stderr)")
    }

    @Test func aTerminalGetsTheProgressLineOfRun() throws {
        let (folder, _) = try Self.photos()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (status, screen) = try Blurfarm.onTerminal(
            "cd '\(folder.path)' && '\(Blurfarm.executable.path)' apply 'in/a/*.jpg' -o 'out/{stem}.png' --resize 64")
        #expect(status == 0, "\(screen)")
        #expect(screen.contains("apply: 10/10 images, 10/10 outputs,"), "\(screen)")
        #expect(screen.contains("MP/s, ETA"), "\(screen)")
        let logged = try Blurfarm.run(["apply", "in/b/*.jpg", "-o", "out/{stem}.png", "--resize", "64"], in: folder)
        #expect(logged.status == 0 && logged.stderr.isEmpty, "\(logged.stderr)")
        #expect(logged.stdout.hasPrefix("apply: 10 written, 0 failed, 10 inputs, in "), "\(logged.stdout)")
    }

    /// A corrupt input fails alone, named, as in `run`: the others are written, status 1.
    @Test func aCorruptInputFailsAloneWithStatusOne() throws {
        let (folder, _) = try Self.photos()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(
            atPath: Fixtures.corpus("special/truncated.jpg"), toPath: folder.appendingPathComponent("in/a/truncated.jpg").path)
        let result = try Blurfarm.run(["apply", "in/a/*.jpg", "-o", "out/{stem}.png", "--resize", "64"], in: folder)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("in/a/truncated.jpg"), "\(result.stderr)")
        #expect(result.stdout.hasPrefix("apply: 10 written, 1 failed, 11 inputs"), "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/truncated.png").path))
    }
}
