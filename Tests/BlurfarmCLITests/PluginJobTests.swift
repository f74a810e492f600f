import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

/// Plugins end to end through the built executable: one built outside the repository from the
/// header alone, the shipped examples, bad parameters, and plugins that fail or crash.
@Suite(.tags(.process), .blocking) struct PluginJobTests {
    /// A job folder (photos, `job.job`) with a `plugins/` folder holding the test plugins
    /// `plugins` (file name in test-plugins/, plugin name, cc defines), and `farm.conf` loading
    /// plugins from there.
    static func makeJob(
        _ manifest: String, photos: [String], plugins: [(source: String, name: String, defines: [String])],
        configuration: String = ""
    ) throws -> URL {
        let folder = try JobCommandTests.makeJob(manifest, photos: photos)
        let pluginFolder = folder.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: pluginFolder, withIntermediateDirectories: true)
        try TestPlugins.setMode(0o755, pluginFolder)
        for plugin in plugins {
            try TestPlugins.compile(plugin.source, as: plugin.name, into: pluginFolder, defines: plugin.defines)
        }
        try ("plugin-folders: [plugins]\nstate: state\n" + configuration)
            .write(to: folder.appendingPathComponent("farm.conf"), atomically: true, encoding: .utf8)
        return folder
    }

    static func blurAnd(_ filter: String) -> String {
        """
        job: plugged
        inputs: [photos/**/*.jpg, photos/**/*.webp]
        outputs:
          - name: plugged
            path: out/{stem}-plugged.png
            filters:
              - \(filter)
          - name: blur
            path: out/{stem}-blur.png
            filters:
              - gaussian:
                  sigma: 1.5

        """
    }

    /// A plugin library whose bytes change (rebuilt, replaced) makes the outputs of its filter
    /// run again, and only those: its content hash is part of their recipe.
    @Test func aChangedPluginLibraryRedoesTheOutputsOfItsFilterOnly() throws {
        let folder = try Self.makeJob(
            Self.blurAnd("invert:\n          amount: 1"), photos: ["special/kite.webp"], plugins: [("invert.c", "invert", [])])
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = [
            "run", folder.appendingPathComponent("job.job").path, "--config", folder.appendingPathComponent("farm.conf").path,
            "--workers", "2", "--verbose",
        ]
        let first = try Blurfarm.run(run)
        #expect(first.status == 0 && first.stdout.contains("plugged: 2 written"), "\(first.stdout)\(first.stderr)")
        let second = try Blurfarm.run(run)
        #expect(second.stdout.contains("plugged: 0 written") && second.stdout.contains("2 up to date"), "\(second.stdout)")
        // The same plugin with other bytes (trailing bytes are ignored by the loader).
        let library = try FileHandle(forWritingTo: folder.appendingPathComponent("plugins/libinvert.so"))
        try library.seekToEnd()
        try library.write(contentsOf: Data("rebuilt".utf8))
        try library.close()
        let third = try Blurfarm.run(run)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.stdout.contains("out/kite-plugged.png"), "\(third.stdout)")
        #expect(!third.stdout.contains("out/kite-blur.png"), "\(third.stdout)")
        #expect(third.stdout.contains("plugged: 1 written") && third.stdout.contains("1 up to date"), "\(third.stdout)")
    }

    /// The ABI is usable with only the header and docs/plugins.md: a C plugin compiled with
    /// `cc -shared -fPIC` against a copy of the header, outside the repository, runs from a
    /// manifest, tiled and verified untiled, and gives what its definition says.
    @Test func aPluginBuiltOutsideTheRepositoryFromTheHeaderRunsFromAManifest() throws {
        let manifest = """
            job: outside
            inputs: [photos/*.jpg]
            outputs:
              - name: inverted
                path: out/{stem}.png
                filters:
                  - invert:
                      amount: 1

            """
        let folder = try Self.makeJob(
            manifest, photos: ["special/exif-orientation-6.jpg"], plugins: [("invert.c", "invert", [])])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("farm.conf").path
        let listed = try Blurfarm.run(["filters", "invert", "--config", config])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("origin: plugin \(folder.path)/plugins/libinvert.so"), "\(listed.stdout)")
        #expect(listed.stdout.contains("amount: a number >= 0 and <= 1, default 1"), "\(listed.stdout)")

        let result = try Blurfarm.run([
            "run", folder.appendingPathComponent("job.job").path, "--config", config, "--verify", "untiled",
            "--tile", "100", "--workers", "2",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("outside: 1 written, 0 failed"), "\(result.stdout)")
        let input = try ImageReader.read(folder.appendingPathComponent("photos/exif-orientation-6.jpg").path)
        let output = try ImageReader.read(folder.appendingPathComponent("out/exif-orientation-6.png").path)
        #expect(output.pixels.rect == input.pixels.rect)
        var worst: Float = 0
        for y in stride(from: 0, to: input.pixels.rect.height, by: 7) {
            for x in stride(from: 0, to: input.pixels.rect.width, by: 7) {
                let a = input.pixels[x, y], b = output.pixels[x, y]
                for c in 0..<3 { worst = max(worst, abs(b[c] - (1 - a[c]))) }
            }
        }
        #expect(worst <= 0.5 / 255 + 1e-6, "the inverse is off by \(worst)")
    }

    /// A plugin filter inside regions: outside them the source, bit for bit, its tiles copied
    /// without the plugin being called (the report's `tilesCopied`); inside, the plugin's work.
    @Test func aPluginFilterAppliesInsideItsRegionsOnly() throws {
        // The same rectangle as the variant's regions, and as the filter's own (indented below it).
        let rect: [String] = ["- rect:", "    x: 10%", "    y: 10%", "    width: 30%", "    height: 30%"]
        func regions(_ indent: String) -> String {
            var lines: [String] = [indent + "regions:"]
            for line in rect { lines.append(indent + "  " + line) }
            return lines.joined(separator: "\n")
        }
        let manifest = """
            job: regions
            inputs: [photos/*.jpg]
            outputs:
              - name: inverted
                path: out/{stem}.png
                filters:
                  - invert:
                      amount: 1
            \(regions("    "))
              - name: own
                path: out/own/{stem}.png
                filters:
                  - invert:
                      amount: 1
            \(regions("          "))

            """
        let folder = try Self.makeJob(
            manifest, photos: ["special/exif-orientation-6.jpg"], plugins: [("invert.c", "invert", [])])
        defer { try? FileManager.default.removeItem(at: folder) }
        let report = folder.appendingPathComponent("report.json").path
        let result = try Blurfarm.run([
            "run", folder.appendingPathComponent("job.job").path, "--config", folder.appendingPathComponent("farm.conf").path,
            "--tile", "64", "--workers", "2", "--report", report,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let list = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [[String: Any]]
        let output = ((list?.first?["outputs"] as? [[String: Any]]) ?? []).first { ($0["output"] as? String)?.contains("/own/") == false } ?? [:]
        let tiles = output["tiles"] as? Int ?? 0, copied = output["tilesCopied"] as? Int ?? 0
        #expect(copied > tiles / 2 && copied < tiles, "\(copied) of \(tiles) tiles copied")
        let input = try ImageReader.read(folder.appendingPathComponent("photos/exif-orientation-6.jpg").path).pixels
        let written = try ImageReader.read(folder.appendingPathComponent("out/exif-orientation-6.png").path).pixels
        let mask = RegionMask(regions: [Region(x: .percent(10), y: .percent(10), width: .percent(30), height: .percent(30))])
        var inverted = 0
        for y in 0..<input.rect.height {
            for x in 0..<input.rect.width {
                if mask.coverage(x: x, y: y, in: input.rect) == 0 {
                    guard written[x, y] == input[x, y] else {
                        Issue.record("(\(x), \(y)) outside the region is not the source")
                        return
                    }
                } else if abs(written[x, y].x - (1 - input[x, y].x)) <= 1 / 255 {
                    inverted += 1
                }
            }
        }
        #expect(inverted > input.rect.area / 20)
        // The plugin placed in the region as its own (`regions` among its parameters): the same
        // blend of its output with its input, the same bytes.
        let own = FileManager.default.contents(atPath: folder.appendingPathComponent("out/own/exif-orientation-6.png").path)
        #expect(own != nil && own == FileManager.default.contents(atPath: folder.appendingPathComponent("out/exif-orientation-6.png").path))
    }

    /// Parameters are checked against the plugin's declaration before anything runs, with
    /// manifest diagnostics (the shipped configuration loads the example plugins).
    @Test func badPluginParametersAreManifestDiagnosticsAndNothingRuns() throws {
        let manifest = """
            job: bad
            inputs: [photos/*.jpg]
            outputs:
              - name: v
                path: out/{stem}.png
                filters:
                  - vignette:
                      strength: 1.5
                      radius: -1
                  - zoom:
                      amount: 95
                      centre: 0.5

            """
        let folder = try JobCommandTests.makeJob(manifest, photos: ["special/grayscale.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        for command in ["check", "run"] {
            let result = try Blurfarm.run([command, job])
            #expect(result.status == 2, "\(command): \(result.stderr)")
            #expect(result.stderr == """
                \(job):8:21: error: 'strength' must be a number >= 0 and <= 1 for plugin 'vignette'
                \(job):9:19: error: 'radius' must be a number >= 0 and <= 1 for plugin 'vignette'
                \(job):11:19: error: 'amount' must be a number >= 0 and <= 50 for plugin 'zoom'
                \(job):12:11: error: unknown key 'centre' in 'zoom'
                \(job):12:11: note: did you mean 'centre-x'?
                \(job): 4 errors

                """, "\(command)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path))
    }

    /// An output whose pixels depend on the tiling (a plugin that blackens its tiles' first
    /// rows) fails `--verify untiled`, is reported and not written; the others are written.
    @Test func anOutputThatDependsOnTheTilingFailsVerificationAndIsNotWritten() throws {
        let folder = try Self.makeJob(
            Self.blurAnd("seams"), photos: ["special/kite.webp"], plugins: [("misbehave.c", "seams", ["NAME=\"seams\"", "SEAMS"])])
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Blurfarm.run([
            "run", folder.appendingPathComponent("job.job").path, "--config", folder.appendingPathComponent("farm.conf").path,
            "--workers", "2", "--tile", "64", "--verify", "untiled",
        ])
        #expect(result.status == 1)
        #expect(result.stdout.contains("plugged: 1 written, 1 failed"), "\(result.stdout)")
        #expect(result.stderr.contains("out/kite-plugged.png: verification failed: "), "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/kite-blur.png").path))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/kite-plugged.png").path))
    }

    @Test func aPluginReturningAnErrorFailsItsTaskWithThePluginsMessage() throws {
        let folder = try Self.makeJob(
            Self.blurAnd("fail"), photos: ["special/kite.webp"], plugins: [("misbehave.c", "fail", ["NAME=\"fail\"", "FAIL"])])
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Blurfarm.run([
            "run", folder.appendingPathComponent("job.job").path, "--config", folder.appendingPathComponent("farm.conf").path,
            "--workers", "2", "--tile", "64",
        ])
        #expect(result.status == 1)
        #expect(result.stdout.contains("plugged: 1 written, 1 failed"), "\(result.stdout)")
        #expect(
            result.stderr.contains("plugin 'fail' run failed (BLURFARM_ERROR_FAILED, -3): this plugin always fails"),
            "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/kite-blur.png").path))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/kite-plugged.png").path))
    }

    /// A plugin that crashes kills the worker running it, not the run: the pool replaces the
    /// worker and retries the tile; past the retry limit the image fails naming the plugin,
    /// and the other outputs are written.
    @Test func aPluginThatCrashesKillsAWorkerAndPastTheRetryLimitFailsItsImageNamingThePlugin() throws {
        let folder = try Self.makeJob(
            Self.blurAnd("crash"), photos: ["special/kite.webp"],
            plugins: [("misbehave.c", "crash", ["NAME=\"crash\"", "CRASH"])], configuration: "retries: 1\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Blurfarm.run([
            "run", folder.appendingPathComponent("job.job").path, "--config", folder.appendingPathComponent("farm.conf").path,
            "--workers", "2", "--tile", "64",
        ])
        #expect(result.status == 1)
        #expect(result.stdout.contains("plugged: 1 written, 1 failed"), "\(result.stdout)")
        #expect(result.stderr.contains("failed 2 times (the chain runs plugin 'crash'); the last time: worker "), "\(result.stderr)")
        #expect(result.stderr.contains("(killed by signal 11)"), "\(result.stderr)")
        // One line for the failure (besides the warning that the JPEG glob matches nothing):
        // the crashed workers print no backtrace.
        #expect(result.stderr.split(separator: "\n").count { !$0.contains(": warning: the input glob ") } == 1, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/kite-blur.png").path))
    }

    /// A plugin stuck in `run` keeps its worker's heartbeats going (they come from another
    /// thread): under the shipped configuration, which sets no `task-timeout`, the adaptive
    /// task timeout still kills the worker; the tile is retried and past the retries its image
    /// fails naming the plugin, the other output is written and the run ends with status 1.
    @Test func aPluginStuckInRunIsCaughtUnderTheShippedDefaults() throws {
        let shipped = try String(
            contentsOf: Fixtures.repository.appendingPathComponent("config/blurfarm.conf"), encoding: .utf8)
        // The shipped settings, with this job's own plugin folder and state folder.
        let settings = shipped.split(separator: "\n")
            .filter { !$0.hasPrefix("state:") && !$0.hasPrefix("plugin-folders:") }.joined(separator: "\n")
        let manifest = """
            job: stuck
            inputs: [photos/**/*.webp]
            outputs:
              - name: stuck
                path: out/{stem}-stuck.png
                resize:
                  width: 64
                filters:
                  - hang
              - name: blur
                path: out/{stem}-blur.png
                filters:
                  - gaussian:
                      sigma: 1.5

            """
        let folder = try Self.makeJob(
            manifest, photos: ["special/kite.webp"], plugins: [("misbehave.c", "hang", ["NAME=\"hang\"", "HANG"])],
            configuration: settings + "\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try Coordinator([
            "run", folder.appendingPathComponent("job.job").path, "--config", folder.appendingPathComponent("farm.conf").path,
        ])
        // Generous: a run that is not caught would hang for ever.
        let status = run.waitForExit(timeout: 300)
        let errors = run.stderr()
        #expect(status == 1, "\(errors)")
        #expect(errors.contains("failed 4 times (the chain runs plugin 'hang'); the last time: worker "), "\(errors)")
        #expect(errors.contains("ran one task longer than the task timeout of "), "\(errors)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/kite-blur.png").path))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/kite-stuck.png").path))
    }

    /// A plugin whose domain of definition is 2·10⁹ pixels, or sides whose product overflows,
    /// is refused by `check` and `run` with its name, without a crash; the other output is
    /// written.
    @Test(arguments: [("huge", "44722,44722"), ("vast", "1LL<<40,1LL<<40")])
    func aPluginDomainOutOfBoundsIsRefusedByCheckAndRun(name: String, domain: String) throws {
        let manifest = Self.blurAnd(name).replacingOccurrences(
            of: "    filters:\n      - \(name)", with: "    edge: grow\n    filters:\n      - \(name)")
        let folder = try Self.makeJob(
            manifest, photos: ["special/kite.webp"], plugins: [("misbehave.c", name, ["NAME=\"\(name)\"", "DOMAIN=\(domain)"])])
        defer { try? FileManager.default.removeItem(at: folder) }
        let options = [folder.appendingPathComponent("job.job").path, "--config", folder.appendingPathComponent("farm.conf").path]
        let refusal = "plugin '\(name)' domain_of_definition returned the rectangle "
        let check = try Blurfarm.run(["check"] + options)
        #expect(check.status == 1, "\(check.stdout)\(check.stderr)")
        #expect(check.stderr.contains("kite.webp: plugged: " + refusal), "\(check.stderr)")
        let run = try Blurfarm.run(["run"] + options + ["--workers", "2"])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains(refusal) && run.stderr.contains("out of bounds: at most 3104x1952+-1040+-656"), "\(run.stderr)")
        #expect(run.stdout.contains("plugged: 1 written, 1 failed"), "\(run.stdout)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/kite-blur.png").path))
    }

    /// An output within the plugin's bounds but over the pixel limit fails its image in the
    /// coordinator, naming the plugin, before anything is allocated for it.
    @Test func anOutputOverThePixelLimitFailsItsImageNamingThePlugin() throws {
        let manifest = Self.blurAnd("wide").replacingOccurrences(
            of: "    filters:\n      - wide", with: "    edge: grow\n    filters:\n      - wide")
        let folder = try Self.makeJob(
            manifest, photos: ["special/kite.webp"], plugins: [("misbehave.c", "wide", ["NAME=\"wide\"", "DOMAIN=2048,1280"])],
            configuration: "pixel-limit: 2000000\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try Blurfarm.run([
            "run", folder.appendingPathComponent("job.job").path, "--config", folder.appendingPathComponent("farm.conf").path,
            "--workers", "2",
        ])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains(
            "the filters' output would be 2048x1280 pixels, more than the pixel limit of 2000000 (the chain runs plugin 'wide')"),
            "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/kite-blur.png").path))
    }

    /// A plugin's message is data: a newline or an escape sequence in it reaches standard error
    /// escaped, on the failure's one line.
    @Test func aPluginsMessageReachesStandardErrorEscaped() throws {
        let folder = try Self.makeJob(
            Self.blurAnd("shout"), photos: ["special/kite.webp"],
            plugins: [("misbehave.c", "shout", ["NAME=\"shout\"", "FAIL", "MESSAGE=\"bad\\nnews \\033[31mred\""])])
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Blurfarm.run([
            "run", folder.appendingPathComponent("job.job").path, "--config", folder.appendingPathComponent("farm.conf").path,
            "--workers", "2",
        ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("run failed (BLURFARM_ERROR_FAILED, -3): bad\\nnews \\u{001B}[31mred"), "\(result.stderr)")
        // One line for the failure (the job's jpg glob matching nothing is a warning of its own).
        let errors = result.stderr.split(separator: "\n").filter { !$0.contains(": warning: ") }
        #expect(!result.stderr.contains("\u{1b}") && errors.count == 1, "\(result.stderr)")
    }

    /// Plugins run in worker processes only: a run that asks for the in-process engine is refused.
    @Test func aJobWithPluginsIsNotRenderedInProcess() throws {
        let folder = try JobCommandTests.makeJob(Self.blurAnd("vignette"), photos: ["special/kite.webp"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Blurfarm.run(["run", folder.appendingPathComponent("job.job").path, "--workers", "0"])
        #expect(result.status == 2)
        #expect(result.stderr == """
            blurfarm: error: plugin filters (vignette) run in worker processes only: drop --workers 0 and --threads

            """)
    }

    /// `blurfarm filters` lists built-ins and plugins with where they come from; a plugin that
    /// fails to load is a warning and the rest are listed.
    @Test func filtersListsEveryFilterAndReportsAPluginThatFailsToLoad() throws {
        let folder = try Self.makeJob(
            Self.blurAnd("invert"), photos: [],
            plugins: [("invert.c", "invert", []), ("misbehave.c", "old", ["NAME=\"old\"", "ABI=9"])])
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Blurfarm.run(["filters", "--config", folder.appendingPathComponent("farm.conf").path])
        #expect(result.status == 0)
        let old = folder.appendingPathComponent("plugins/libold.so").path
        #expect(result.stderr == """
            blurfarm: warning: plugin not loaded: \(old): built for plugin ABI version 9; this blurfarm supports version 1

            """)
        #expect(result.stdout.hasPrefix("gaussian  (built-in)\n"), "\(result.stdout)")
        #expect(result.stdout.contains("invert  (plugin \(folder.path)/plugins/libinvert.so)\n    inverts the colours\n    amount: a number >= 0 and <= 1, default 1\n"), "\(result.stdout)")
        let shipped = try Blurfarm.run(["filters"])
        #expect(shipped.stdout.contains("vignette  (plugin \(TestPlugins.buildFolder)/libvignette.so)"), "\(shipped.stdout)")
        #expect(shipped.stdout.contains("zoom  (plugin \(TestPlugins.buildFolder)/libzoom.so)"), "\(shipped.stdout)")
        let unknown = try Blurfarm.run(["filters", "zooom"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.hasPrefix("blurfarm: error: unknown filter 'zooom' (did you mean 'zoom'?); available: gaussian, motion"))
    }

    /// `apply` loads only the plugins its filters name: a plugin of the folders that fails to
    /// load is no concern of an image blurred by built-in filters, a plugin named runs, and a
    /// name that is neither is answered from every plugin of the folders, as `filters` does
    /// (its warnings and the list of filters there are).
    @Test func applyLoadsOnlyThePluginsItsFiltersName() throws {
        let folder = try Self.makeJob(
            Self.blurAnd("invert"), photos: [],
            plugins: [("invert.c", "invert", []), ("misbehave.c", "old", ["NAME=\"old\"", "ABI=9"])])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("farm.conf").path
        let old = folder.appendingPathComponent("plugins/libold.so").path
        let input = Fixtures.corpus("special/kite.webp")
        let output = folder.appendingPathComponent("out.png").path
        func apply(_ filter: String) throws -> CommandResult {
            try Blurfarm.run(["apply", input, output, "--filter", filter, "--config", config])
        }
        let blurred = try apply("gaussian sigma=2")
        #expect(blurred.status == 0)
        #expect(blurred.stderr == "")
        let inverted = try apply("invert amount=1")
        #expect(inverted.status == 0)
        #expect(inverted.stderr == "")
        let unknown = try apply("invertt amount=1")
        #expect(unknown.status == 1)
        #expect(unknown.stderr == """
            blurfarm: warning: plugin not loaded: \(old): built for plugin ABI version 9; this blurfarm supports version 1
            blurfarm: error: --filter 'invertt amount=1': unknown filter 'invertt' (did you mean 'invert'?); available: gaussian, motion, frost, tint, redact, invert

            """)
    }

    /// The plugin example job, as docs/plugins.md runs it, beside a copy of the manifest.
    @Test func thePluginExampleJobWritesEveryOutput() throws {
        let folder = try JobCommandTests.shippedJobCopy("plugins.job")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Blurfarm.run(["run", "jobs/plugins.job"], in: folder)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("plugins: 6 written, 0 failed, 3 inputs"), "\(result.stdout)")
        for stem in ["mate-FreshFlower", "mate-GreenMeadow", "plasma-Kite"] {
            for output in ["vignette/\(stem).jpg", "zoom/\(stem).png"] {
                let header = try ImageReader.header(ofFile: folder.appendingPathComponent("out/plugins/" + output).path)
                #expect(header.width == 1024, "\(output)")
            }
        }
    }
}
