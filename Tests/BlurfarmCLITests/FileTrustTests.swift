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
@Suite struct FileTrustTests {
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

    /// A run, then `lock` or `records.jsonl` replaced by a link to a victim file: the next run
    /// fails with one line naming the file and the victim keeps its bytes.
    @Test(arguments: ["lock", "records.jsonl"])
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

    /// Creates the file whose name (in `folder`) is the bytes `name`, holding a generated image.
    static func makeFile(named name: [UInt8], in folder: String) throws {
        var random = SplitMix(seed: 3)
        let image = IncrementalRunTests.ppm(width: 8, height: 8, using: &random)
        let path = Array(folder.utf8) + [UInt8(ascii: "/")] + name + [0]
        let fd = path.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        }
        try #require(fd >= 0)
        _ = image.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// A name that is not UTF-8 is refused loudly, one line naming it escaped; the others run.
    @Test func aNameThatIsNotUTF8IsRefusedLoudlyAndTheOthersRun() throws {
        let job = try Job.make(manifest: Self.manifest(path: "out/{stem}.png"))
        defer { try? FileManager.default.removeItem(at: job.root) }
        try Self.makeFile(named: Array("caf".utf8) + [0xE9] + Array(".png".utf8), in: job.path("in"))
        for command in ["check", "run"] {
            let result = try job.run(command)
            #expect(result.status == 1, "\(command): \(result.stdout) \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains("'in/caf\\xE9.png': the file name is not UTF-8"), "\(result.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: job.path("out/a.png")))
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
        #expect(lines.count == 1 && lines[0].contains("x\\nblurfarm: forged"), "\(result.stderr)")
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
        var arguments = [Blurfarm.executable.path, "check", job.manifest, "--config", job.config]
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
        #expect(process.terminationStatus == 1, "\(stderr)")
        #expect(stderr.contains("cannot read the folder 'in/private' (Permission denied)"), "\(stderr)")
    }
}
