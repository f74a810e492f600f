import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// `blurfarm apply` end to end, through the built executable.
@Suite(.tags(.process), .blocking) struct ApplyCommandTests {
    @Test func blursACorpusPhotoAndKeepsItsSize() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.png").path
        let result = try Blurfarm.run([
            "apply", Fixtures.corpus("special/kite.webp"), output, "--filter", "gaussian sigma=3",
            "--filter", "motion radius=6 angle=30", "--tile", "100", "--threads", "2",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let header = try ImageReader.header(ofFile: output)
        #expect(header.width == 1024 && header.height == 640)
        // Only the output in the folder: no temporary file left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out.png"])
    }

    /// An output that is the input (the same name, or a hard link to it) is refused before
    /// anything is read, as a manifest's output that is one of its inputs: the photo is kept.
    @Test func anOutputThatIsTheInputIsRefusedAndTheInputKept() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("k.jpg").path
        try FileManager.default.copyItem(atPath: Fixtures.corpus("photos/plasma-Kite.jpg"), toPath: input)
        try FileManager.default.linkItem(atPath: input, toPath: folder.appendingPathComponent("hard.jpg").path)
        let original = try Data(contentsOf: URL(fileURLWithPath: input))
        for output in ["k.jpg", "./k.jpg", "hard.jpg"] {
            let result = try Blurfarm.run(["apply", "k.jpg", output, "--filter", "gaussian sigma=2"], in: folder)
            #expect(result.status == 2, "\(output): \(result.stderr)")
            #expect(result.stderr.contains("'\(output)' would overwrite the input 'k.jpg' (the same file)"), "\(result.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == original)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["hard.jpg", "k.jpg"])
    }

    /// The tile size and the engine (threads of this process, or one or two worker
    /// processes) do not change the bytes written.
    @Test func tileSizeAndWorkersDoNotChangeTheBytesWritten() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var files: [String: Data] = [:]
        for (tile, workers) in [("0", "0"), ("37", "0"), ("256", "0"), ("37", "1"), ("256", "2")] {
            let output = folder.appendingPathComponent("t\(tile)-w\(workers).png").path
            let result = try Blurfarm.run([
                "apply", Fixtures.corpus("special/alpha-garbage-under-transparent.png"), output,
                "--filter", "gaussian sigma=5", "--edge", "mirror", "--colour", "linear", "--tile", tile,
                "--workers", workers, "--verbose",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains(workers == "0" ? " thread" : "on \(workers) worker"), "\(result.stdout)")
            files[output] = try Data(contentsOf: URL(fileURLWithPath: output))
        }
        #expect(Set(files.values).count == 1, "\(files.mapValues(\.count))")
    }

    /// Plugin filters (the shipped configuration loads the example plugins from the build
    /// folder) run in the worker processes, the same bytes whatever the tiles; in process they
    /// are refused.
    @Test func aPluginFilterRunsInTheWorkersAndIsRefusedInProcess() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var files: [Data] = []
        for tile in ["0", "100"] {
            let output = folder.appendingPathComponent("v\(tile).png").path
            let result = try Blurfarm.run([
                "apply", Fixtures.corpus("special/kite.webp"), output, "--filter", "vignette strength=0.8",
                "--filter", "zoom amount=5", "--tile", tile, "--workers", "2",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            files.append(try Data(contentsOf: URL(fileURLWithPath: output)))
        }
        #expect(files[0] == files[1])
        let refused = try Blurfarm.run([
            "apply", Fixtures.corpus("special/kite.webp"), folder.appendingPathComponent("no.png").path,
            "--filter", "vignette strength=0.8", "--threads", "2",
        ])
        #expect(refused.status == 2)
        #expect(refused.stderr == "blurfarm: error: plugin filters (vignette) run in worker processes only: drop --workers 0 and --threads\n")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("no.png").path))
    }

    /// `--lossless` follows the manifest's rule (WebP only), in the same words, before any
    /// pixel is decoded, and writes nothing.
    @Test func losslessIsRefusedForFormatsOtherThanWebPAsInAManifest() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.jpg").path
        let result = try Blurfarm.run([
            "apply", Fixtures.corpus("special/kite.webp"), output, "--filter", "gaussian sigma=3", "--lossless",
        ])
        #expect(result.status == 1)
        let rule = "'lossless' applies to WebP outputs only; this path ends in '.jpg'"
        #expect(result.stderr == "blurfarm: error: \(output): \(rule)\n", "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        let manifest = folder.appendingPathComponent("job.job")
        try "job: j\ninputs: [a/*.png]\noutputs:\n  - name: x\n    path: o/{stem}.jpg\n    lossless: true\n"
            .write(to: manifest, atomically: true, encoding: .utf8)
        let check = try Blurfarm.run(["check", manifest.path])
        #expect(check.status == 2)
        #expect(check.stderr.contains("job.job:6:15: error: \(rule)"), "\(check.stderr)")
        let webp = try Blurfarm.run([
            "apply", Fixtures.corpus("special/kite.webp"), folder.appendingPathComponent("out.webp").path,
            "--filter", "gaussian sigma=3", "--lossless",
        ])
        #expect(webp.status == 0, "\(webp.stderr)")
    }

    /// `--resize` without a filter makes the same file as a manifest variant's `resize`, and
    /// no filter at all converts the format; a fit that needs both sides is refused.
    @Test func resizeAndConvertWithoutAFilterAsAVariantWould() throws {
        let folder = try JobCommandTests.makeJob(
            """
            job: thumbs
            inputs: [photos/*.webp]
            outputs:
              - name: thumb
                path: out/{stem}.png
                resize:
                  width: 200
                  height: 200
                  fit: cover

            """, photos: ["special/kite.webp"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try Blurfarm.run(["run", folder.appendingPathComponent("job.job").path])
        #expect(run.status == 0, "\(run.stderr)")
        let applied = folder.appendingPathComponent("applied.png").path
        let apply = try Blurfarm.run([
            "apply", Fixtures.corpus("special/kite.webp"), applied, "--resize", "200x200", "--fit", "cover",
        ])
        #expect(apply.status == 0, "\(apply.stderr)")
        let thumbnail = try Data(contentsOf: folder.appendingPathComponent("out/kite.png"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: applied)) == thumbnail)

        let converted = folder.appendingPathComponent("converted.tif").path
        #expect(try Blurfarm.run(["apply", Fixtures.corpus("special/kite.webp"), converted]).status == 0)
        let header = try ImageReader.header(ofFile: converted)
        #expect(header.width == 1024 && header.height == 640)
        let narrow = try Blurfarm.run(["apply", Fixtures.corpus("special/kite.webp"), converted, "--resize", "x100"])
        #expect(narrow.status == 0, "\(narrow.stderr)")
        #expect(try ImageReader.header(ofFile: converted).height == 100)

        let refused = try Blurfarm.run([
            "apply", Fixtures.corpus("special/kite.webp"), converted, "--resize", "100", "--fit", "exact",
        ])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--fit exact needs both sides of the box"), "\(refused.stderr)")
    }

    /// `-` reads standard input and writes standard output (`--format` names its format): the
    /// same bytes as from and to files; an empty or unreadable input names `standard input`.
    @Test func standardInputAndOutputGiveTheSameBytesAsFiles() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Fixtures.corpus("special/kite.webp")
        let file = folder.appendingPathComponent("file.png").path
        let filters = ["--filter", "gaussian sigma=2", "--resize", "300"]
        #expect(try Blurfarm.run(["apply", source, file] + filters).status == 0)
        let piped = folder.appendingPathComponent("piped.png").path
        let sh = try Blurfarm.run([
            "-c", "exec \"$0\" apply - - --format png \"$@\" < \"\(source)\" > \"\(piped)\"",
            Blurfarm.executable.path,
        ] + filters, shell: true)
        #expect(sh.status == 0, "\(sh.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: piped)) == Data(contentsOf: URL(fileURLWithPath: file)))
        let empty = try Blurfarm.run(["-c", "exec \"$0\" apply - \"\(file)\" < /dev/null", Blurfarm.executable.path], shell: true)
        #expect(empty.status == 1 && empty.stderr == "blurfarm: error: standard input: is empty\n", "\(empty.stderr)")
        let noFormat = try Blurfarm.run(["apply", source, "-"])
        #expect(noFormat.status == 64 && noFormat.stderr.contains("needs --format"), "\(noFormat.stderr)")
    }

    @Test func growMakesTheOutputLargerByTheReach() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("grown.png").path
        let result = try Blurfarm.run([
            "apply", Fixtures.corpus("special/kite.webp"), output, "--filter", "gaussian sigma=2", "--edge", "grow",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let header = try ImageReader.header(ofFile: output)
        #expect(header.width == 1024 + 12 && header.height == 640 + 12 && header.hasAlpha)
    }

    /// No filter, but an edge rule that gives an opaque image an alpha channel: the chain is
    /// not the identity and is rendered (once taken for the identity, it crashed), to an alpha
    /// of 1 everywhere that the writer drops again: the bytes of the plain conversion.
    @Test func aChainWithoutFiltersThatAddsAlphaIsRenderedToTheOpaqueImage() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Fixtures.corpus("photos/plasma-Kite.jpg")
        let rendered = folder.appendingPathComponent("rendered.png").path
        let converted = folder.appendingPathComponent("converted.png").path
        let result = try Blurfarm.run(["apply", source, rendered, "--edge", "transparent"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Blurfarm.run(["apply", source, converted]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: rendered)) == Data(contentsOf: URL(fileURLWithPath: converted)))
    }

    @Test func versionAndHelpAnswer() throws {
        let version = try Blurfarm.run(["--version"])
        #expect(version.status == 0 && !version.stdout.isEmpty)
        let help = try Blurfarm.run(["apply", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--filter") && help.stdout.contains("gaussian sigma="))
    }
}
