import BlurfarmTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Files and folders that are not what they seem (docs/security.md, "Files and folders"):
/// outputs compared as files, not spellings; outputs a later run would take as inputs;
/// placeholders that would climb; state files behind planted links; a manifest reached through
/// a linked folder; names that are not text. End to end, through the built executable.
@Suite(.tags(.process), .blocking) struct FileTrustTests {
    /// A job folder: `in/` with small generated images, a configuration whose state folder is
    /// inside it, and the manifest `job.job`.
    struct Job {
        let root: URL
        var manifest: String { path("job.job") }
        var config: String { path("farm.conf") }
        func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

        /// `inputs` are paths (relative to the folder) of images to make (PPM data, whatever the
    /// name says: libvips reads it by its content).
        static func make(inputs: [String] = ["in/a.png", "in/b.png"], manifest: String) throws -> Job {
            let job = Job(root: try Fixtures.temporaryFolder())
            var random = SplitMix(seed: 9)
            for input in inputs {
                try FileManager.default.createDirectory(
                    atPath: (job.path(input) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try IncrementalRunTests.ppm(width: 24, height: 16, using: &random)
                    .write(to: URL(fileURLWithPath: job.path(input)))
            }
            try "state: state\n".write(toFile: job.config, atomically: true, encoding: .utf8)
            try manifest.write(toFile: job.manifest, atomically: true, encoding: .utf8)
            return job
        }

        func run(_ command: String = "run", _ arguments: [String] = [], manifest: String? = nil) throws -> CommandResult {
            try Blurfarm.run([command, manifest ?? self.manifest, "--config", config] + arguments)
        }

        func link(_ name: String, to target: String) throws {
            try FileManager.default.createSymbolicLink(atPath: path(name), withDestinationPath: target)
        }

        func bytes(_ relative: String) -> Data? { FileManager.default.contents(atPath: path(relative)) }
    }

    static func manifest(inputs: String = "[in/*.png]", path: String) -> String {
        """
        job: trust
        inputs: \(inputs)
        outputs:
          - name: copy
            path: '\(path)'

        """
    }

    /// `check` and `run` both refuse with one diagnostic at the variant's `path:` (line 5,
    /// column 11) containing `message`, and nothing in `in/` changes.
    static func expectRefused(
        _ job: Job, _ message: String, inputs: String = "in", sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = try FileManager.default.contentsOfDirectory(atPath: job.path(inputs)).sorted().map { job.bytes(inputs + "/" + $0) }
        for command in ["check", "run"] {
            let result = try job.run(command)
            #expect(result.status == 2, "\(command): \(result.stdout) \(result.stderr)", sourceLocation: sourceLocation)
            #expect(
                result.stderr.contains("\(job.manifest):5:11: error: ") && result.stderr.contains(message),
                "\(command): \(result.stderr)", sourceLocation: sourceLocation)
        }
        let after = try FileManager.default.contentsOfDirectory(atPath: job.path(inputs)).sorted().map { job.bytes(inputs + "/" + $0) }
        #expect(before == after, "an input changed", sourceLocation: sourceLocation)
    }

    // MARK: An output is never an input, however spelled

    @Test func anOutputFolderThatIsALinkToTheInputsIsRefused() throws {
        let job = try Job.make(manifest: Self.manifest(path: "out/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        try job.link("out", to: "in")
        try Self.expectRefused(job, "variant 'copy' would overwrite the input 'in/a.png'")
    }

    /// `a/../shortcut/a.png` is `sub/in/a.png` when `shortcut` links to `sub/in`: no spelling
    /// of the path says so, the files do.
    @Test func aDotDotSpellingThroughALinkIsTheInput() throws {
        let job = try Job.make(
            inputs: ["sub/in/a.png"], manifest: Self.manifest(inputs: "[sub/in/*.png]", path: "a/../shortcut/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        try job.link("shortcut", to: "sub/in")
        try Self.expectRefused(job, "variant 'copy' would overwrite the input 'sub/in/a.png'", inputs: "sub/in")
    }

    @Test func anOutputThatIsAHardLinkOfAnInputIsRefused() throws {
        let job = try Job.make(manifest: Self.manifest(path: "out/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        try FileManager.default.createDirectory(atPath: job.path("out"), withIntermediateDirectories: true)
        try FileManager.default.linkItem(atPath: job.path("in/b.png"), toPath: job.path("out/b.png"))
        try Self.expectRefused(job, "variant 'copy' would overwrite the input 'in/b.png'")
    }

    @Test func twoOutputsThatAreOneFileAreRefused() throws {
        let text = Self.manifest(path: "out/{stem}.png") + """
              - name: again
                path: same/{stem}.png

            """
        let job = try Job.make(manifest: text)
        defer { try? FileManager.default.removeItem(at: job.root) }
        try FileManager.default.createDirectory(atPath: job.path("out"), withIntermediateDirectories: true)
        try job.link("same", to: "out")
        let result = try job.run("check")
        #expect(result.status == 2)
        #expect(
            result.stderr.contains(
                "\(job.manifest):7:11: error: variants 'copy' (for in/a.png) and 'again' (for in/a.png) both write '\(job.path("same/a.png"))' (as '\(job.path("out/a.png"))': the same file)"),
            "\(result.stderr)")
    }

    /// The manifest is named like an image here so that a variant can name it.
    @Test func anOutputThatIsTheManifestIsRefused() throws {
        let job = try Job.make(inputs: ["in/job.png"], manifest: Self.manifest(path: "{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        let manifest = job.path("job.png")
        try FileManager.default.moveItem(atPath: job.manifest, toPath: manifest)
        let before = job.bytes("job.png")
        let result = try job.run("run", manifest: manifest)
        #expect(result.status == 2)
        #expect(result.stderr.contains("error: variant 'copy' would overwrite the manifest '\(manifest)'"), "\(result.stderr)")
        #expect(job.bytes("job.png") == before)
    }

    // MARK: Outputs a later run's globs would match

    /// The variant's own files are never inputs: the second run finds everything up to date.
    @Test func outputsInsideTheInputFoldersAreNotInputsOfTheNextRun() throws {
        let job = try Job.make(
            inputs: ["photos/a.png", "photos/2024/b.png"],
            manifest: Self.manifest(inputs: "[photos/**/*.png]", path: "photos/thumbs/{relpath}/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        let first = try job.run("run", ["--verbose"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("trust: 2 written, 0 failed"), "\(first.stdout)")
        #expect(FileManager.default.fileExists(atPath: job.path("photos/thumbs/2024/b.png")))
        let second = try job.run("run", ["--verbose"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("trust: 0 written, 0 failed, 2 inputs"), "\(second.stdout)")
        let check = try job.run("check")
        #expect(check.status == 0 && check.stdout.contains("2 inputs, 2 outputs"), "\(check.stdout) \(check.stderr)")
    }

    /// Through a link the pattern cannot see: refused at check, with the real path and the glob.
    @Test func outputsThatTheGlobsWouldTakeThroughALinkAreRefusedAtCheck() throws {
        let job = try Job.make(
            inputs: ["photos/a.png"], manifest: Self.manifest(inputs: "[photos/**/*.png]", path: "thumbs/{stem}-t.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        try FileManager.default.createDirectory(atPath: job.path("photos/t"), withIntermediateDirectories: true)
        try job.link("thumbs", to: "photos/t")
        try Self.expectRefused(job, "the input glob 'photos/**/*.png' would take it as an input on the next run", inputs: "photos")
    }

    // MARK: Placeholders cannot climb

    @Test func aStemOfDotDotCannotClimbOutOfTheOutputFolder() throws {
        // A hidden name: only a glob that starts with '.' takes it.
        let job = try Job.make(
            inputs: ["in/a.png", "in/...png"], manifest: Self.manifest(inputs: "[in/*.png, in/.*.png]", path: "out/{stem}/{variant}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        try Self.expectRefused(
            job, "input 'in/...png': '{stem}' would make the path segment '..', which climbs out of the template's folder")
        #expect(!FileManager.default.fileExists(atPath: job.path("copy.png")))
    }

    // MARK: State files behind planted links

    /// A run, then `lock` or the records' index replaced by a link to a victim file: the next
    /// run fails with one line naming the file and the victim keeps its bytes.
    @Test(arguments: ["lock", "records.sqlite"])
    func aLinkPlantedWhereAStateFileGoesIsRefused(_ name: String) throws {
        let job = try Job.make(manifest: Self.manifest(path: "out/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        #expect(try job.run().status == 0)
        let jobs = try FileManager.default.contentsOfDirectory(atPath: job.path("state/jobs"))
        let file = job.path("state/jobs/\(try #require(jobs.first))/\(name)")
        let victim = job.path("victim.txt")
        try Data().write(to: URL(fileURLWithPath: victim))
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: victim)
        let result = try job.run("run", ["--force"])
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("\(file): is a symbolic link"), "\(result.stderr)")
        #expect(job.bytes("victim.txt") == Data())
    }

    /// `state/reports` replaced by a link to another folder: the run's report is not written
    /// there, and the run says so in one line.
    @Test func aLinkPlantedAsTheReportsFolderIsRefused() throws {
        let job = try Job.make(manifest: Self.manifest(path: "out/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        try FileManager.default.createDirectory(atPath: job.path("victim"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: job.path("state"), withIntermediateDirectories: true)
        try job.link("state/reports", to: job.path("victim"))
        let result = try job.run()
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("\(job.path("state/reports")): is a symbolic link"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: job.path("victim")).isEmpty)
    }

    /// Files in an output folder that merely look like abandoned temporary files (a dead
    /// writer's pid, an hour old) are someone else's: the run leaves them.
    @Test func lookAlikesOfTemporaryFilesSurviveARun() throws {
        let job = try Job.make(manifest: Self.manifest(path: "out/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let dead = child.processIdentifier
        try FileManager.default.createDirectory(atPath: job.path("out"), withIntermediateDirectories: true)
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, 255)
        let names = [
            ".x.png.blurfarm-\(dead)-Ab3xYz",
            ".y.png.blurfarm-\(String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))-\(dead)-Ab3xYzAb3xYz",
        ]
        for name in names {
            try Data("mine".utf8).write(to: URL(fileURLWithPath: job.path("out/" + name)))
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: job.path("out/" + name))
        }
        #expect(try job.run().status == 0)
        for name in names { #expect(job.bytes("out/" + name) == Data("mine".utf8), "\(name)") }
    }

    // MARK: One manifest, one job

    @Test func theSameManifestThroughALinkedFolderIsTheSameJob() throws {
        let job = try Job.make(manifest: Self.manifest(path: "out/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        try job.link("link", to: ".")
        let first = try job.run()
        #expect(first.status == 0 && first.stdout.contains("2 written"), "\(first.stdout) \(first.stderr)")
        let again = try job.run("run", ["--verbose"], manifest: job.path("link/job.job"))
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("0 written, 0 failed, 2 inputs") && again.stdout.contains("2 up to date"), "\(again.stdout)")
        // The lock, held through one spelling, blocks the other.
        let jobs = try FileManager.default.contentsOfDirectory(atPath: job.path("state/jobs"))
        #expect(jobs.count == 1, "\(jobs)")
        let lock = open(job.path("state/jobs/\(jobs[0])/lock"), O_RDWR)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)
        let blocked = try job.run("run", [], manifest: job.path("link/job.job"))
        #expect(blocked.status == 3, "\(blocked.stderr)")
    }

    // MARK: Names are bytes

    /// Creates the file whose name (in `folder`) is the bytes `name`, holding `contents` (by
    /// default a generated image).
    static func makeFile(named name: [UInt8], in folder: String, contents: [UInt8]? = nil) throws {
        var random = SplitMix(seed: 3)
        let image = contents.map { Data($0) } ?? IncrementalRunTests.ppm(width: 8, height: 8, using: &random)
        let path = Array(folder.utf8) + [UInt8(ascii: "/")] + name + [0]
        let fd = path.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        }
        try #require(fd >= 0)
        _ = image.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// `café` with the Latin-1 é (0xE9): not UTF-8.
    static let latin1Cafe: [UInt8] = Array("caf".utf8) + [0xE9]

    /// Removes the file whose path is the bytes `path`.
    static func removeFile(bytes path: [UInt8]) {
        _ = (path + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { unlink($0.baseAddress!) } }
    }

    /// A name that is not UTF-8 is processed end to end: planned, decoded, written under the
    /// template's name with the same raw bytes, recorded (the second run does nothing), pruned
    /// when its input goes; shown as `\xE9` in every line; the report stays JSON, with the
    /// exact bytes in base64.
    @Test func aNameThatIsNotUTF8IsProcessedRecordedAndPruned() throws {
        let job = try Job.make(manifest: Self.manifest(path: "out/{stem}.jpg"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        try Self.makeFile(named: Self.latin1Cafe + Array(".png".utf8), in: job.path("in"))

        let check = try job.run("check")
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("in/caf\\xE9.png") && check.stdout.contains("out/caf\\xE9.jpg"), "\(check.stdout)")

        let report = job.path("report.json")
        let first = try job.run("run", ["--verbose", "--report", report])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("out/caf\\xE9.jpg: copy of in/caf\\xE9.png"), "\(first.stdout)")
        #expect(first.stdout.contains("3 written"), "\(first.stdout)")
        let written = Self.latin1Cafe + Array(".jpg".utf8)
        #expect(RawNames.inFolder(job.path("out")) == [Array("a.jpg".utf8), Array("b.jpg".utf8), written])
        // The output is a JPEG of the input's size, read back by its raw name.
        let output = Array(job.path("out").utf8) + [UInt8(ascii: "/")] + written
        let fd = (output + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_RDONLY) } }
        try #require(fd >= 0)
        var magic = [UInt8](repeating: 0, count: 3)
        #expect(read(fd, &magic, 3) == 3 && magic == [0xFF, 0xD8, 0xFF])
        close(fd)

        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [[String: Any]])
        let outputs = try #require(json.first?["outputs"] as? [[String: Any]])
        let cafe = try #require(outputs.first { ($0["input"] as? String)?.hasPrefix("in/caf") == true })
        #expect(cafe["input"] as? String == "in/caf\\xE9.png" && cafe["output"] as? String == "\(job.root.path)/out/caf\\xE9.jpg")
        #expect((cafe["inputBytes"] as? String).flatMap { Data(base64Encoded: $0) } == Data(Array("in/".utf8) + Self.latin1Cafe + Array(".png".utf8)))
        #expect((cafe["outputBytes"] as? String).flatMap { Data(base64Encoded: $0) } == Data(output))
        #expect(outputs.filter { $0["input"] as? String == "in/a.png" }.allSatisfy { $0["inputBytes"] == nil })

        // The read commands' JSON shows the byte as the messages do.
        let plan = try JSONSerialization.jsonObject(with: Data(try job.run("check", ["--json"]).stdout.utf8)) as? [[String: Any]]
        let planned = (plan?.first?["inputs"] as? [[String: Any]] ?? []).compactMap { $0["input"] as? String }
        #expect(planned.contains("in/caf\\xE9.png"), "\(planned)")
        let status = try JSONSerialization.jsonObject(
            with: Data(try job.run("check", ["--status", "--json"]).stdout.utf8)) as? [[String: Any]]
        let states = (status?.first?["outputs"] as? [[String: Any]] ?? []).filter { $0["input"] as? String == "in/caf\\xE9.png" }
        #expect(states.count == 1 && states.first?["state"] as? String == "upToDate", "\(states)")

        let second = try job.run("run", ["--verbose"])
        #expect(second.status == 0 && second.stdout.contains("0 written") && second.stdout.contains("3 up to date"), "\(second.stdout)")

        Self.removeFile(bytes: Array(job.path("in").utf8) + [UInt8(ascii: "/")] + Self.latin1Cafe + Array(".png".utf8))
        let pruning = try job.run("run", ["--verbose", "--prune"])
        #expect(pruning.status == 0, "\(pruning.stderr)")
        #expect(pruning.stdout.contains("pruned \(job.root.path)/out/caf\\xE9.jpg"), "\(pruning.stdout)")
        #expect(RawNames.inFolder(job.path("out")) == [Array("a.jpg".utf8), Array("b.jpg".utf8)])
    }

    /// A Latin-1 name (`caf` 0xE9 `.png`) beside its look-alike in UTF-8 (`caf\xE9.png`, with a
    /// real backslash) in an output map: two inputs and two outputs, every entry told apart by
    /// its `pathBytes` (present only for the name that is not UTF-8, and exactly the bytes of
    /// the file on disk), the map valid against its schema.
    @Test func aNameThatIsNotUTF8AndItsLookAlikeAreTwoEntriesOfTheMap() throws {
        let job = try Job.make(inputs: [], manifest: Self.manifest(path: "out/{stem}.jpg") + "map: site/map.json\n")
        defer { try? FileManager.default.removeItem(at: job.root) }
        try FileManager.default.createDirectory(atPath: job.path("in"), withIntermediateDirectories: true)
        let latin1 = Self.latin1Cafe + Array(".png".utf8)
        let lookAlike = Array("caf\\xE9.png".utf8)
        try Self.makeFile(named: latin1, in: job.path("in"))
        try Self.makeFile(named: lookAlike, in: job.path("in"))
        let run = try job.run("run")
        #expect(run.status == 0, "\(run.stderr)")
        let map = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: job.path("site/map.json")))) as? [String: Any])
        let inputs = try #require(map["inputs"] as? [[String: Any]])
        try #require(inputs.count == 2)
        /// An entry's exact bytes: `pathBytes` when present, else the path's UTF-8.
        func bytes(_ entry: [String: Any]) -> [UInt8] {
            if let encoded = entry["pathBytes"] as? String { return Array(Data(base64Encoded: encoded) ?? Data()) }
            return Array((entry["path"] as? String ?? "").utf8)
        }
        let inputBytes = Set(inputs.map(bytes))
        #expect(inputBytes == [Array("../in/".utf8) + latin1, Array("../in/".utf8) + lookAlike], "\(inputs)")
        #expect(inputs.filter { $0["pathBytes"] != nil }.count == 1)
        let outputs = inputs.flatMap { $0["outputs"] as? [[String: Any]] ?? [] }
        #expect(Set(outputs.map(bytes)) == [
            Array("../out/".utf8) + Self.latin1Cafe + Array(".jpg".utf8), Array("../out/caf\\xE9.jpg".utf8),
        ], "\(outputs)")
        // Each output's bytes name a file on disk.
        #expect(Set(RawNames.inFolder(job.path("out")) ?? []) == [Self.latin1Cafe + Array(".jpg".utf8), Array("caf\\xE9.jpg".utf8)])
        #expect(try OutputMapTests.validate(job.path("site/map.json")).status == 0)
    }

    /// Twin names (`é`, and `e` with a combining accent: one string to Swift, two files) of
    /// other sizes are two entries of the map, each with its own input's size, twice as the
    /// second run reads the placeholders back from the records.
    @Test func twinNamesAreTwoEntriesOfTheMapEachWithItsOwnSize() throws {
        let job = try Job.make(inputs: [], manifest: Self.manifest(path: "out/{stem}.jpg") + "map: site/map.json\n")
        defer { try? FileManager.default.removeItem(at: job.root) }
        try FileManager.default.createDirectory(atPath: job.path("in"), withIntermediateDirectories: true)
        var random = SplitMix(seed: 12)
        let twins = [(name: "\u{E9}", width: 20), (name: "e\u{301}", width: 30)]
        for twin in twins {
            let image = IncrementalRunTests.ppm(width: twin.width, height: 16, using: &random)
            try Self.makeFile(named: Array("\(twin.name).png".utf8), in: job.path("in"), contents: Array(image))
        }
        for pass in ["first", "second"] {
            let run = try job.run("run")
            #expect(run.status == 0, "\(run.stderr)")
            let map = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: job.path("site/map.json"))))
            let inputs = (map as? [String: Any])?["inputs"] as? [[String: Any]] ?? []
            let widths = twins.map { twin in
                inputs.filter { ($0["path"] as? String)?.utf8.elementsEqual("../in/\(twin.name).png".utf8) == true }
                    .compactMap { $0["width"] as? Int }
            }
            #expect(widths == twins.map { [$0.width] }, "\(pass) run: \(inputs)")
        }
    }

    /// A failure on an input whose name is not UTF-8 is one line with the name escaped, on
    /// standard error, in the log and in the report (which stays JSON).
    @Test func aNameThatIsNotUTF8IsEscapedInErrorsTheLogAndTheReport() throws {
        let job = try Job.make(manifest: Self.manifest(path: "out/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        try Self.makeFile(named: Self.latin1Cafe + Array(".png".utf8), in: job.path("in"), contents: Array("not an image".utf8))
        let report = job.path("report.json"), log = job.path("run.log")
        let result = try job.run("run", ["--report", report, "--log", log])
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("in/caf\\xE9.png"), "\(result.stderr)")
        let logged = try String(contentsOfFile: log, encoding: .utf8)
        #expect(logged.contains("in/caf\\xE9.png") && !logged.unicodeScalars.contains { ("\u{F780}"..."\u{F7FF}").contains($0) }, "\(logged)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [[String: Any]])
        let failed = (json.first?["outputs"] as? [[String: Any]] ?? []).filter { $0["status"] as? String == "failed" }
        #expect(failed.count == 1 && ((failed.first?["error"] as? [String: Any])?["message"] as? String)?.contains("in/caf\\xE9.png") == true, "\(failed)")
    }

    /// A real name holding U+F7E9, which blurfarm uses for the byte 0xE9, would be ambiguous:
    /// refused loudly, one line naming it; the others run.
    @Test func aNameHoldingTheCharactersThatStandForBytesIsRefusedLoudly() throws {
        let job = try Job.make(manifest: Self.manifest(path: "out/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        try Self.makeFile(named: Array("caf\u{F7E9}.png".utf8), in: job.path("in"))
        for command in ["check", "run"] {
            let result = try job.run(command)
            #expect(result.status == 1, "\(command): \(result.stdout) \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(
                lines.count == 1 && lines[0].contains("'in/caf\\u{F7E9}.png': the file name holds characters U+F780…U+F7FF"),
                "\(result.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: job.path("out/a.png")))
    }

    /// A glob or a path in the manifest holding U+F7E9 would be read as the byte 0xE9: refused
    /// at `check`, naming the character.
    @Test func aManifestPathHoldingTheCharactersThatStandForBytesIsRefused() throws {
        let job = try Job.make(manifest: Self.manifest(inputs: "[in/*\u{F7E9}.png]", path: "out/{stem}\u{F7E9}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        let result = try job.run("check")
        #expect(result.status != 0)
        #expect(result.stderr.contains("input glob 'in/*\\u{F7E9}.png' holds characters U+F780…U+F7FF"), "\(result.stderr)")
        #expect(result.stderr.contains("path 'out/{stem}\\u{F7E9}.png' holds characters U+F780…U+F7FF"), "\(result.stderr)")
    }

    /// A newline in a name cannot forge a line: the failure is one line, the name escaped.
    @Test func aNewlineInANameIsEscapedInMessages() throws {
        let job = try Job.make(manifest: Self.manifest(path: "out/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        try Data("P6\n99999 1\n255\n".utf8).write(to: URL(fileURLWithPath: job.path("in/x\nblurfarm: forged.png")))
        let report = job.path("report.json")
        let result = try job.run("run", ["--report", report])
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("x\\nblurfarm: forged"), "\(result.stderr) OUT \(result.stdout)")
        #expect((try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report)))) != nil)
    }

    /// A folder under a glob that cannot be read is an error naming it. As root (CI), the
    /// check runs without the capabilities that let root read any folder.
    @Test func anUnreadableFolderUnderAGlobIsAnErrorNamingIt() throws {
        let job = try Job.make(
            inputs: ["in/a.png", "in/private/b.png"], manifest: Self.manifest(inputs: "[in/**/*.png]", path: "out/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        chmod(job.path("in/private"), 0)
        defer { chmod(job.path("in/private"), 0o755) }
        let (status, stderr) = try Self.blurfarmAsAUser(["check", job.manifest, "--config", job.config])
        #expect(status == 1, "\(stderr)")
        #expect(stderr.contains("cannot read the folder 'in/private' (Permission denied)"), "\(stderr)")
    }

    /// Records in a job's state folder that this user may not write in cannot be read (SQLite
    /// reads an index with its `-wal` and `-shm` files beside it): `check --status` says so and
    /// why, without advising to remove them, and leaves the folder as it was.
    @Test func recordsInAFolderThisUserMayNotWriteInAreAnErrorSayingWhy() throws {
        let job = try Job.make(manifest: Self.manifest(path: "out/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        #expect(try job.run().status == 0)
        let jobs = job.path("state/jobs")
        let folder = jobs + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: jobs).first))
        chmod(folder, 0o555)
        defer { chmod(folder, 0o755) }
        let (status, stderr) = try Self.blurfarmAsAUser(["check", job.manifest, "--config", job.config, "--status"])
        #expect(status == 1, "\(stderr)")
        #expect(
            stderr.contains("records.sqlite: cannot read the records") && stderr.contains("may not make in \(folder)")
                && !stderr.contains("remove the file"), "\(stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["lock", "records.sqlite"])
    }

    /// Runs blurfarm with `arguments` as a user bound by files' permissions: as root (CI),
    /// without the capabilities that let root read and write anything. Its status and
    /// standard error.
    static func blurfarmAsAUser(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        var arguments = [Blurfarm.executable.path] + arguments
        if getuid() == 0 { arguments = ["/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search"] + arguments }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let err = Pipe(), out = Pipe()
        process.standardError = err
        process.standardOutput = out
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        _ = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, stderr)
    }
}
