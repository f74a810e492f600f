import BlurfarmTestSupport
import BlurfarmImageIO
import Foundation
import Testing

/// `blurfarm run --watch` through the executable: inputs copied into a watched folder are
/// rendered once they are quiet, changed ones again, and SIGTERM ends the watch cleanly.
@Suite(.tags(.process), .blocking) struct WatchModeTests {
    /// A started `run --watch` with its standard output and error going to files.
    struct Watch {
        let root: URL
        let process: Process
        let manifest: String
        let config: String

        /// `prepare` is given the folder (with `in/` made) before the watch starts.
        static func start(
            manifest text: String, arguments: [String] = [], prepare: (URL) throws -> Void = { _ in }
        ) throws -> Watch {
            let root = try Fixtures.temporaryFolder()
            try FileManager.default.createDirectory(at: root.appendingPathComponent("in"), withIntermediateDirectories: true)
            try prepare(root)
            let manifest = root.appendingPathComponent("job.job").path
            let config = root.appendingPathComponent("farm.conf").path
            try text.write(toFile: manifest, atomically: true, encoding: .utf8)
            try "state: state\n".write(toFile: config, atomically: true, encoding: .utf8)
            try Data().write(to: root.appendingPathComponent("stdout"))
            try Data().write(to: root.appendingPathComponent("stderr"))
            let process = Process()
            process.executableURL = Blurfarm.executable
            process.arguments = ["run", manifest, "--config", config, "--watch", "--workers", "1"] + arguments
            process.environment = Blurfarm.environment
            process.standardOutput = try FileHandle(forWritingTo: root.appendingPathComponent("stdout"))
            process.standardError = try FileHandle(forWritingTo: root.appendingPathComponent("stderr"))
            try process.run()
            let watch = Watch(root: root, process: process, manifest: manifest, config: config)
            // The first run says that the glob matches nothing yet: the folders are watched by then.
            try watch.waitFor("first run") { watch.stderr.contains("matches no file") }
            return watch
        }

        func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
        var stdout: String { (try? String(contentsOfFile: path("stdout"), encoding: .utf8)) ?? "" }
        var stderr: String { (try? String(contentsOfFile: path("stderr"), encoding: .utf8)) ?? "" }

        /// Waits until `condition` holds (`eventually`); the test fails if the watch ends first.
        func waitFor(_ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool) throws {
            try eventually(
                "\(what); stdout: \(stdout) stderr: \(stderr)", interval: .milliseconds(50), sourceLocation: sourceLocation
            ) {
                if condition() { return true }
                guard process.isRunning else {
                    throw WatchFailure(message: "the watch ended before \(what); stdout: \(stdout) stderr: \(stderr)")
                }
                return false
            }
        }

        /// Waits for the process to end by itself (`eventually`: killed when it does not); its
        /// exit status.
        func waitForExit(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int32 {
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            try eventually(
                "\(what): the watch's end; stdout: \(stdout) stderr: \(stderr)", interval: .milliseconds(50),
                sourceLocation: sourceLocation
            ) { !process.isRunning }
            process.waitUntilExit()
            return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
        }

        /// The outputs written, as their paths relative to the folder, in the order of the
        /// lines that name them.
        var written: [String] {
            stdout.split(separator: "\n").compactMap { line in
                line.hasPrefix(root.path + "/") ? String(line.dropFirst(root.path.count + 1).prefix { $0 != ":" }) : nil
            }
        }

        /// Ends the watch if it still runs, and removes its folder.
        func finish() {
            if process.isRunning { _ = terminate() }
            try? FileManager.default.removeItem(at: root)
        }

        /// Sends SIGTERM and waits for the process to end.
        func terminate() -> Int32 {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
        }

        /// Every file below the folder `relative`, as paths relative to it.
        func files(under relative: String) -> [String] {
            (FileManager.default.enumerator(atPath: path(relative))?.allObjects as? [String] ?? []).filter { name in
                var folder: ObjCBool = false
                return FileManager.default.fileExists(atPath: path(relative + "/" + name), isDirectory: &folder) && !folder.boolValue
            }.sorted()
        }
    }

    struct WatchFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static let manifest = """
        job: watched
        inputs: [in/**/*.jpg]
        outputs:
          - name: small
            path: out/{relpath}/{stem}.png
            resize:
              width: 32
            filters:
              - gaussian:
                  sigma: 1

        """

    /// Appends `bytes` to the file at `path` (made if missing), then closes it, as a copy
    /// that writes in several goes does.
    static func append(_ bytes: Data, to path: String) throws {
        if !FileManager.default.fileExists(atPath: path) { try Data().write(to: URL(fileURLWithPath: path)) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: bytes)
        try handle.close()
    }

    /// A folder whose name is not UTF-8 (the Latin-1 byte 0xE9) under `**` is watched: an input
    /// copied into it is rendered, its output folder has the same bytes.
    @Test func aFolderWhoseNameIsNotUTF8IsWatched() throws {
        func withPath<R>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
            (bytes + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
        }
        var folder: [UInt8] = []
        let watch = try Watch.start(manifest: Self.manifest) { root in
            folder = Array(root.appendingPathComponent("in").path.utf8) + Array("/d".utf8) + [0xE9]
            try #require(withPath(folder) { mkdir($0, 0o755) } == 0)
        }
        defer { watch.finish() }
        let photo = try Data(contentsOf: URL(fileURLWithPath: Fixtures.corpus("special/grayscale.jpg")))
        let fd = withPath(folder + Array("/b.jpg".utf8)) { open($0, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        try #require(fd >= 0)
        _ = photo.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        try watch.waitFor("the output in the folder whose name is not UTF-8") { watch.stdout.contains("out/d\\xE9/b.png") }
        #expect(RawNames.inFolder(watch.path("out")) == [Array("d".utf8) + [0xE9]])
        #expect(watch.terminate() == 0, "\(watch.stderr)")
    }

    @Test func newAndChangedInputsAreRenderedOnceQuietAndSIGTERMEndsTheWatchCleanly() throws {
        let watch = try Watch.start(manifest: Self.manifest)
        defer { watch.finish() }
        // Copied in slowly, in two writes with a pause shorter than the quiet period: rendered
        // once, after the second (the first half alone is not a JPEG that decodes).
        let photo = try Data(contentsOf: URL(fileURLWithPath: Fixtures.corpus("special/grayscale.jpg")))
        let input = watch.path("in/a.jpg")
        try Self.append(photo.prefix(photo.count / 2), to: input)
        usleep(300_000)
        try Self.append(photo.suffix(from: photo.count / 2), to: input)
        let output = watch.path("out/a.png")
        try watch.waitFor("the first output") { FileManager.default.fileExists(atPath: output) }
        let first = try ImageReader.header(ofFile: output)
        #expect(first.width == 32 && first.height == 26, "\(first.width)x\(first.height)")

        // Changed in place: rendered again, from the new bytes.
        let other = try Data(contentsOf: URL(fileURLWithPath: Fixtures.corpus("special/exif-orientation-6.jpg")))
        try other.write(to: URL(fileURLWithPath: input))
        try watch.waitFor("the output of the changed input") {
            (try? ImageReader.header(ofFile: output))?.height == 48
        }
        // A folder made under `**` is watched as it appears.
        try FileManager.default.createDirectory(atPath: watch.path("in/2024/trip"), withIntermediateDirectories: true)
        usleep(200_000)
        try photo.write(to: URL(fileURLWithPath: watch.path("in/2024/trip/b.jpg")))
        try watch.waitFor("the output in a new folder") { FileManager.default.fileExists(atPath: watch.path("out/2024/trip/b.png")) }

        #expect(watch.terminate() == 0, "\(watch.stderr)")
        // One line per output written, naming it.
        #expect(watch.written == ["out/a.png", "out/a.png", "out/2024/trip/b.png"], "\(watch.stdout)")
        #expect(!watch.stderr.contains("error:"), "\(watch.stderr)")
        // No temporary file anywhere, and the lock is free: a run gets it at once, and has
        // nothing to do.
        #expect(watch.files(under: "out") == ["2024/trip/b.png", "a.png"])
        #expect(watch.files(under: "state").allSatisfy { !$0.contains(".blurfarm-") }, "\(watch.files(under: "state"))")
        let again = try Blurfarm.run(["run", watch.manifest, "--config", watch.config])
        #expect(again.status == 0 && again.stdout.isEmpty && again.stderr.isEmpty, "\(again.stdout) \(again.stderr)")
    }

    /// A region file (`regions: {from: …}`) made, changed or removed beside an input runs that
    /// input again, as a changed input does; rewritten with the same boxes, it does not.
    /// A watch of a job blurring the boxes of region files at `from` (`missing: skip`), once
    /// it wrote `out/a.png` from a turned photo without one: the watch, that output's path and
    /// its bytes (the photo unfiltered).
    static func watchingRegionFiles(from: String) throws -> (watch: Watch, output: String, unfiltered: Data) {
        let manifest = """
            job: watched
            inputs: [in/*.jpg]
            outputs:
              - name: faces
                path: out/{stem}.png
                filters:
                  - gaussian:
                      sigma: 4
                regions:
                  from: "\(from)"
                  missing: skip

            """
        let watch = try Watch.start(manifest: manifest)
        do {
            let output = watch.path("out/a.png")
            try Data(contentsOf: URL(fileURLWithPath: Fixtures.corpus("special/exif-orientation-6.jpg")))
                .write(to: URL(fileURLWithPath: watch.path("in/a.jpg")))
            try watch.waitFor("the unfiltered output") { watch.written.count == 1 }
            return (watch, output, try Data(contentsOf: URL(fileURLWithPath: output)))
        } catch {
            watch.finish()  // no watch outlives its test
            throw error
        }
    }

    @Test func aRegionFileMadeChangedOrRemovedRendersItsInputAgain() throws {
        let (watch, output, unfiltered) = try Self.watchingRegionFiles(from: "{stem}.faces.json")
        defer { watch.finish() }
        func boxes(_ x: Int) throws {
            try #"{"width": 853, "height": 1280, "boxes": [{"x": \#(x), "y": 100, "width": 200, "height": 200}]}"#
                .write(toFile: watch.path("in/a.faces.json"), atomically: true, encoding: .utf8)
        }
        try boxes(100)
        try watch.waitFor("the output blurred in the box") { watch.written.count == 2 }
        let first = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(first != unfiltered)
        try boxes(400)
        try watch.waitFor("the output blurred in the moved box") { watch.written.count == 3 }
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) != first)
        try FileManager.default.removeItem(atPath: watch.path("in/a.faces.json"))
        try watch.waitFor("the output unfiltered again") { watch.written.count == 4 }
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == unfiltered)
        // The same boxes written again: looked at, nothing to render (a later input's output
        // says the watch has seen the rewrite by then).
        try boxes(400)
        try watch.waitFor("the output blurred in the box again") { watch.written.count == 5 }
        try boxes(400)
        usleep(200_000)
        try Data(contentsOf: URL(fileURLWithPath: Fixtures.corpus("special/grayscale.jpg")))
            .write(to: URL(fileURLWithPath: watch.path("in/b.jpg")))
        try watch.waitFor("the later input's output") { watch.written.contains("out/b.png") }
        #expect(watch.terminate() == 0, "\(watch.stderr)")
        #expect(watch.written == Array(repeating: "out/a.png", count: 5) + ["out/b.png"], "\(watch.stdout)")
    }

    /// Region files in a hidden folder beside the inputs (`from: .faces/{stem}.json`, as a
    /// detector writes them): the folder made after the watch started and a file arriving in
    /// it run the input again, so the photo does not stay published unblurred.
    @Test func aRegionFileArrivingInAHiddenFolderRendersItsInputAgain() throws {
        let (watch, output, unfiltered) = try Self.watchingRegionFiles(from: ".faces/{stem}.json")
        defer { watch.finish() }
        try FileManager.default.createDirectory(atPath: watch.path("in/.faces"), withIntermediateDirectories: true)
        try #"{"width": 853, "height": 1280, "boxes": [{"x": 100, "y": 100, "width": 200, "height": 200}]}"#
            .write(toFile: watch.path("in/.faces/a.json"), atomically: true, encoding: .utf8)
        try watch.waitFor("the output blurred in the box") { watch.written.count == 2 }
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) != unfiltered)
        #expect(watch.terminate() == 0, "\(watch.stderr)")
    }

    @Test func deletedInputsArePrunedOnlyWithPrune() throws {
        for prune in [false, true] {
            let watch = try Watch.start(manifest: Self.manifest, arguments: prune ? ["--prune"] : [])
            defer { try? FileManager.default.removeItem(at: watch.root) }
            let photo = try Data(contentsOf: URL(fileURLWithPath: Fixtures.corpus("special/grayscale.jpg")))
            for name in ["a", "b", "c"] { try photo.write(to: URL(fileURLWithPath: watch.path("in/\(name).jpg"))) }
            try watch.waitFor("three outputs") { watch.files(under: "out").count == 3 }
            try FileManager.default.removeItem(atPath: watch.path("in/a.jpg"))
            if prune {
                try watch.waitFor("the pruned output") { !FileManager.default.fileExists(atPath: watch.path("out/a.png")) }
                #expect(watch.terminate() == 0, "\(watch.stderr)")
                #expect(watch.stdout.contains("pruned \(watch.path("out/a.png"))"), "\(watch.stdout)")
            } else {
                // A file added after the deletion: once it is rendered, the deletion was seen.
                try photo.write(to: URL(fileURLWithPath: watch.path("in/d.jpg")))
                try watch.waitFor("the output of a later input") { FileManager.default.fileExists(atPath: watch.path("out/d.png")) }
                #expect(watch.terminate() == 0, "\(watch.stderr)")
                #expect(FileManager.default.fileExists(atPath: watch.path("out/a.png")))
                #expect(!watch.stdout.contains("pruned"), "\(watch.stdout)")
            }
        }
    }

    /// The number of times `text` occurs in `whole`.
    static func occurrences(of text: String, in whole: String) -> Int { whole.components(separatedBy: text).count - 1 }

    /// A slow writer (a real process): four writes 1.6 s apart, each longer than the quiet
    /// period, then the file is closed. It is decoded once, after it is closed: no failure is
    /// reported (a half-written JPEG does not decode), and the output is written once.
    @Test func aSlowWritersFileIsDecodedOnceClosedNotHalfWritten() throws {
        let watch = try Watch.start(manifest: Self.manifest)
        defer { watch.finish() }
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        writer.arguments = [
            "python3", "-c",
            """
            import sys, time
            data = open(sys.argv[2], "rb").read()
            step = (len(data) + 3) // 4
            with open(sys.argv[1], "wb") as f:
                for i in range(4):
                    if i:
                        time.sleep(1.6)
                    f.write(data[i * step:(i + 1) * step])
                    f.flush()
            """,
            watch.path("in/slow.jpg"), Fixtures.corpus("special/grayscale.jpg"),
        ]
        try writer.run()
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        try watch.waitFor("the output of the slowly written input") { FileManager.default.fileExists(atPath: watch.path("out/slow.png")) }
        // A run that decoded it half-written would have reported its failure before this one ran.
        #expect(watch.terminate() == 0, "\(watch.stderr)")
        #expect(!watch.stderr.contains("error:"), "\(watch.stderr)")
        #expect(!watch.stdout.contains(" 1 failed"), "\(watch.stdout)")
        #expect(watch.written == ["out/slow.png"], "\(watch.stdout)")
        #expect(try ImageReader.header(ofFile: watch.path("out/slow.png")).height == 26)
    }

    /// The input folder removed with what it held and made again (a restore): the folder now
    /// at its path is watched, said once (on standard error and in the log), and what arrived
    /// meanwhile is rendered; so is what arrives later.
    @Test func anInputFolderRemovedAndMadeAgainIsWatchedAgainAndWhatArrivedMeanwhileIsRendered() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-watch-\(UUID().uuidString).log").path
        let watch = try Watch.start(manifest: Self.manifest, arguments: ["--log", log])
        defer {
            watch.finish()
            try? FileManager.default.removeItem(atPath: log)
        }
        let photo = try Data(contentsOf: URL(fileURLWithPath: Fixtures.corpus("special/grayscale.jpg")))
        try photo.write(to: URL(fileURLWithPath: watch.path("in/a.jpg")))
        try watch.waitFor("the first output") { FileManager.default.fileExists(atPath: watch.path("out/a.png")) }
        try FileManager.default.removeItem(atPath: watch.path("in"))
        try FileManager.default.createDirectory(atPath: watch.path("in/2024"), withIntermediateDirectories: true)
        try photo.write(to: URL(fileURLWithPath: watch.path("in/2024/b.jpg")))
        try watch.waitFor("the output of an input in the new folder") { FileManager.default.fileExists(atPath: watch.path("out/2024/b.png")) }
        try photo.write(to: URL(fileURLWithPath: watch.path("in/2024/c.jpg")))
        try watch.waitFor("the output of an input added later") { FileManager.default.fileExists(atPath: watch.path("out/2024/c.png")) }
        #expect(watch.terminate() == 0, "\(watch.stderr)")
        let said = "warning: the watched folder '\(watch.path("in"))' was replaced"
        #expect(Self.occurrences(of: said, in: watch.stderr) == 1, "\(watch.stderr)")
        let logged = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(Self.occurrences(of: said, in: logged) == 1, "\(logged)")
        #expect(watch.written == ["out/a.png", "out/2024/b.png", "out/2024/c.png"], "\(watch.stdout)")
    }

    /// The input folder's parent swapped by rename for another (a deploy): the input folder
    /// now at the same path is watched; its inputs are rendered, and those added later.
    @Test func aParentSwappedByRenameIsFollowed() throws {
        let manifest = Self.manifest.replacingOccurrences(of: "inputs: [in/**/*.jpg]", with: "inputs: [site/in/*.jpg]")
        let watch = try Watch.start(manifest: manifest) { root in
            try FileManager.default.createDirectory(at: root.appendingPathComponent("site/in"), withIntermediateDirectories: true)
        }
        defer { watch.finish() }
        let photo = try Data(contentsOf: URL(fileURLWithPath: Fixtures.corpus("special/grayscale.jpg")))
        try photo.write(to: URL(fileURLWithPath: watch.path("site/in/a.jpg")))
        try watch.waitFor("the first output") { FileManager.default.fileExists(atPath: watch.path("out/a.png")) }
        try FileManager.default.createDirectory(atPath: watch.path("site.new/in"), withIntermediateDirectories: true)
        try photo.write(to: URL(fileURLWithPath: watch.path("site.new/in/b.jpg")))
        #expect(rename(watch.path("site"), watch.path("site.old")) == 0)
        #expect(rename(watch.path("site.new"), watch.path("site")) == 0)
        try watch.waitFor("the output of the new folder's input") { FileManager.default.fileExists(atPath: watch.path("out/b.png")) }
        try photo.write(to: URL(fileURLWithPath: watch.path("site/in/c.jpg")))
        try watch.waitFor("the output of an input added later") { FileManager.default.fileExists(atPath: watch.path("out/c.png")) }
        #expect(watch.terminate() == 0, "\(watch.stderr)")
        #expect(watch.stderr.contains("warning: the watched folder '\(watch.path("site/in"))' was replaced"), "\(watch.stderr)")
        #expect(watch.written == ["out/a.png", "out/b.png", "out/c.png"], "\(watch.stdout)")
    }

    /// The input folder renamed away and nothing made at its path: the watch ends with status
    /// 1, naming the folder, instead of watching the folder that left.
    @Test func anInputFolderThatDoesNotComeBackEndsTheWatchWithStatus1() throws {
        let watch = try Watch.start(manifest: Self.manifest)
        defer { watch.finish() }
        #expect(rename(watch.path("in"), watch.path("in.gone")) == 0)
        let status = try watch.waitForExit("the input folder renamed away")
        #expect(status == 1, "\(watch.stderr)")
        #expect(
            watch.stderr.contains("error: the watched folder '\(watch.path("in"))' went away")
                && watch.stderr.contains("within 10 seconds"), "\(watch.stderr)")
    }
}
