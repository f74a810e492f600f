import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Writes that cannot finish (docs/security.md, "An exhausted machine"): a full disk and the
/// file-size limit give a line naming the output and the cause, remove the temporary file and
/// leave nothing half-written; a process killed while it writes leaves no file behind.
@Suite(.tags(.process), .blocking) struct WriteFailureTests {
    /// A small tmpfs mounted on a new folder (root only), unmounted by `remove()`.
    struct SmallFileSystem {
        let path: String

        /// Whether this process may mount one (it is root, and the kernel lets it): found
        /// once by mounting and unmounting one.
        static let canMount: Bool = {
            guard let probe = try? SmallFileSystem(kilobytes: 64) else { return false }
            probe.remove()
            return true
        }()

        struct MountRefused: Error, CustomStringConvertible {
            let description: String
        }

        /// Mounts one of `kilobytes`, with at most `inodes` files and folders (its root one of them).
        init(kilobytes: Int, inodes: Int? = nil) throws {
            path = try Fixtures.temporaryFolder().path
            let status = try Self.mount(["-t", "tmpfs", "-o", "size=\(kilobytes)k" + (inodes.map { ",nr_inodes=\($0)" } ?? ""), "tmpfs", path])
            guard status == 0 else {
                try? FileManager.default.removeItem(atPath: path)
                throw MountRefused(description: "mount -t tmpfs refused (status \(status))")
            }
        }

        /// `mount` with `arguments`, its errors unsaid; its exit status.
        static func mount(_ arguments: [String]) throws -> Int32 {
            let mount = Process()
            mount.executableURL = URL(fileURLWithPath: "/bin/mount")
            mount.arguments = arguments
            mount.standardError = FileHandle.nullDevice
            try mount.run()
            mount.waitUntilExit()
            return mount.terminationStatus
        }

        /// Fills the file system but for about `room` bytes, with the file `filler`.
        func fill(leaving room: Int) throws {
            let filler = path + "/filler"
            let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            try #require(fd >= 0)
            defer { close(fd) }
            let chunk = [UInt8](repeating: 0x5A, count: 4096)
            var size = 0
            while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == chunk.count { size += chunk.count }
            try #require(errno == ENOSPC, "filling the tmpfs: \(String(cString: strerror(errno)))")
            try #require(ftruncate(fd, off_t(max(0, size - room))) == 0)
        }

        /// Mounts it again read-only (EROFS for every write, as ext4 does after errors).
        func remountReadOnly() throws {
            try #require(try Self.mount(["-o", "remount,ro", path]) == 0, "mount -o remount,ro \(path)")
        }

        func remove() {
            let unmount = Process()
            unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
            unmount.arguments = [path]
            try? unmount.run()
            unmount.waitUntilExit()
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// A job folder: `photos/kite.webp`, the blur job writing `out/{stem}-blur.png`, and `out`.
    static func makeJob() throws -> (folder: URL, manifest: String, config: String) {
        let folder = try Fixtures.temporaryFolder()
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.path("special/kite.webp"), toPath: photos.path + "/kite.webp")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("out"), withIntermediateDirectories: true)
        let (manifest, config) = try Fixtures.writeBlurJob(named: "writes", in: folder)
        return (folder, manifest, config)
    }

    @Test(
        .enabled(if: SmallFileSystem.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN); the write cannot be made to run out of room"))
    func aFullDiskNamesTheOutputAndTheCauseAndLeavesNothing() throws {
        let disk = try SmallFileSystem(kilobytes: 1024)
        defer { disk.remove() }
        try disk.fill(leaving: 16 << 10)
        // `apply` band by band (a libvips saver writing to the file) and whole (without a
        // filter the image is encoded in memory, then written).
        for (arguments, name) in [
            (["--filter", "gaussian sigma=1.5"], "banded.png"), ([], "whole.png"),
        ] {
            let output = disk.path + "/" + name
            let result = try Blurfarm.run(["apply", Corpus.path("special/kite.webp"), output] + arguments)
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("\(output): write failed: No space left on device"), "\(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == ["filler"], "temporary files left")

        // `run`, its outputs' folder on the full disk.
        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.folder) }
        let out = job.folder.appendingPathComponent("out").path
        try FileManager.default.removeItem(atPath: out)
        try FileManager.default.createSymbolicLink(atPath: out, withDestinationPath: disk.path)
        let run = try Blurfarm.run(["run", job.manifest, "--config", job.config])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("kite-blur.png: write failed: No space left on device"), "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == ["filler"], "temporary files left")
    }

    /// A full disk stops the job's writing there: the output that found it fails with its line,
    /// the job says once that it stopped writing there, its outputs there not yet written are
    /// `stopped` (counted, not a line each: a library of a million photos on a full disk would
    /// decode every one to fail its write, a line each), nothing is left half-written; its
    /// variant on another disk is written whole; once there is room, the next run makes every
    /// output.
    @Test(
        .enabled(if: SmallFileSystem.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN); the write cannot be made to run out of room"))
    func aFullDiskStopsTheJobsWritingAndTheNextRunMakesTheRest() throws {
        let disk = try SmallFileSystem(kilobytes: 64 << 10)
        defer { disk.remove() }
        try disk.fill(leaving: 16 << 10)
        let count = 24
        let job = try Self.makeJob(photos: count, outputsOn: disk.path)
        defer { try? FileManager.default.removeItem(at: job.folder) }
        // A second variant, a thumbnail, on the job's own disk.
        try String(contentsOfFile: job.manifest, encoding: .utf8)
            .appending("  - name: thumb\n    path: kept/{stem}.jpg\n    resize:\n      width: 32\n")
            .write(toFile: job.manifest, atomically: true, encoding: .utf8)
        let run = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--report", job.report])
        #expect(run.status == 1, "\(run.stderr)")
        let full = run.stderr.split(separator: "\n").filter {
            $0.contains("-blur.png: write failed: No space left on device") && !$0.contains("stopped writing")
        }
        #expect(full.count >= 1 && full.count < count, "\(run.stderr)")
        #expect(run.stderr.components(separatedBy: "job 'writes' stopped writing to the disk of ").count == 2, "\(run.stderr)")
        let counts = try IncrementalRunTests.Report(path: job.report).counts
        #expect(counts["written"] == count && counts["failed"] == full.count, "\(counts)")
        #expect(counts["stopped"] == count - full.count, "\(counts)")
        #expect(run.stdout.contains("\(count - full.count) not started (stopped)"), "\(run.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == ["filler"], "temporary files left")
        #expect(try FileManager.default.contentsOfDirectory(atPath: job.folder.path + "/kept").count == count)

        try FileManager.default.removeItem(atPath: disk.path + "/filler")
        let rerun = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--report", job.report])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try IncrementalRunTests.Report(path: job.report).counts["written"] == count)
    }

    /// A disk with no inode left is as full: the output's folder cannot be made (ENOSPC from
    /// `mkdir`), and the job stops writing all the same.
    @Test(
        .enabled(if: SmallFileSystem.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN); the write cannot be made to run out of room"))
    func aDiskWithoutInodesStopsTheJobsWritingAtItsFolder() throws {
        let disk = try SmallFileSystem(kilobytes: 64 << 10, inodes: 4)
        defer { disk.remove() }
        var taken = 0
        while FileManager.default.createFile(atPath: disk.path + "/taken\(taken)", contents: nil) { taken += 1 }
        #expect(taken > 0 && errno == ENOSPC, "\(taken) files: \(String(cString: strerror(errno)))")
        let job = try Self.makeJob(photos: 8, outputsOn: disk.path)
        defer { try? FileManager.default.removeItem(at: job.folder) }
        try String(contentsOfFile: job.manifest, encoding: .utf8).replacingOccurrences(of: "out/{stem}-blur.png", with: "out/blurred/{stem}.png")
            .write(toFile: job.manifest, atomically: true, encoding: .utf8)
        let run = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--report", job.report])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("blurred: cannot create the folder: No space left on device"), "\(run.stderr)")
        #expect(run.stderr.components(separatedBy: "job 'writes' stopped writing to the disk of ").count == 2, "\(run.stderr)")
        let counts = try IncrementalRunTests.Report(path: job.report).counts
        #expect(counts["written"] == 0 && counts["stopped"]! > 0 && counts["failed"]! + counts["stopped"]! == 8, "\(counts)")
    }

    /// A read-only file system (ext4 remounts so after errors) refuses every write there as a
    /// full one does: one output's line, the job's once, the others there stopped.
    @Test(
        .enabled(if: SmallFileSystem.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN); the write cannot be made to run out of room"))
    func aReadOnlyDiskStopsTheJobsWritingThere() throws {
        let disk = try SmallFileSystem(kilobytes: 1024)
        defer { disk.remove() }
        try disk.remountReadOnly()
        let job = try Self.makeJob(photos: 8, outputsOn: disk.path)
        defer { try? FileManager.default.removeItem(at: job.folder) }
        let run = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--report", job.report])
        #expect(run.status == 1, "\(run.stderr)")
        let refused = run.stderr.split(separator: "\n").filter { $0.contains("Read-only file system") && !$0.contains("stopped writing") }
        #expect(refused.count >= 1 && refused.count < 8, "\(run.stderr)")
        #expect(run.stderr.components(separatedBy: "job 'writes' stopped writing to the disk of ").count == 2, "\(run.stderr)")
        let counts = try IncrementalRunTests.Report(path: job.report).counts
        #expect(counts["failed"] == refused.count && counts["stopped"] == 8 - refused.count, "\(counts)")
    }

    /// A redaction job whose disk is full searches no photo of a batch after the first: their
    /// outputs could not be written (the second batch of 76 photos, 1,100 in all: a job of a
    /// million photos searched every batch, for nothing). Each photo searched leaves its boxes
    /// in the state folder's cache, one file a content.
    @Test(
        .enabled(if: SmallFileSystem.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN); the write cannot be made to run out of room"))
    func aRedactionOnAFullDiskSearchesNoPhotoItCannotWrite() throws {
        let disk = try SmallFileSystem(kilobytes: 1024)
        defer { disk.remove() }
        try disk.fill(leaving: 0)
        let job = try Self.makeJob(photos: 1, outputsOn: disk.path)
        defer { try? FileManager.default.removeItem(at: job.folder) }
        let photos = job.folder.appendingPathComponent("photos")
        try FileManager.default.removeItem(at: photos.appendingPathComponent("kite.webp"))
        var random = SplitMix(seed: 5)
        let count = IncrementalRun.reportBatch + 76
        for i in 0..<count {
            try IncrementalRunTests.ppm(width: 24, height: 16, using: &random)
                .write(to: photos.appendingPathComponent(String(format: "p%04d.ppm", i)))
        }
        try ("job: writes\ninputs: [photos/*]\noutputs:\n" + FaceDetectionTests.redacting(path: "out/{stem}.png"))
            .write(toFile: job.manifest, atomically: true, encoding: .utf8)

        // The shipped configuration, which finds the detector; the state folder the job's own.
        let scratch = FaceDetectionTests.Scratch(folder: job.folder)
        let run = try Blurfarm.run(["run", job.manifest, "--report", job.report], environment: scratch.environment)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.components(separatedBy: "job 'writes' stopped writing to the disk of ").count == 2, "\(run.stderr)")
        let counts = try IncrementalRunTests.Report(path: job.report).counts
        #expect(counts["written"] == 0 && counts["failed"]! + counts["stopped"]! == count, "\(counts)")
        #expect(try scratch.cachedBoxes().count == IncrementalRun.reportBatch)
    }

    /// ``makeJob()`` with `photos` copies of the kite, its `out` a link to the folder `disk`,
    /// and the path of a report of its runs (`--report`).
    static func makeJob(photos: Int, outputsOn disk: String) throws -> (folder: URL, manifest: String, config: String, report: String) {
        let job = try makeJob()
        let folder = job.folder.appendingPathComponent("photos").path
        for i in 1..<photos { try FileManager.default.copyItem(atPath: folder + "/kite.webp", toPath: folder + "/kite\(i).webp") }
        let out = job.folder.appendingPathComponent("out").path
        try FileManager.default.removeItem(atPath: out)
        try FileManager.default.createSymbolicLink(atPath: out, withDestinationPath: disk)
        return (job.folder, job.manifest, job.config, job.folder.appendingPathComponent("report.json").path)
    }

    /// Under `ulimit -f`, a write past the limit fails with EFBIG (SIGXFSZ is ignored): one
    /// line naming the output, status 1, the temporary file removed. Before, the process died
    /// of SIGXFSZ without a word and `apply` left its temporary file.
    @Test func theFileSizeLimitFailsTheWriteWithALineInsteadOfKillingTheProcess() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // 64 blocks: 32 KB (sh counts 512-byte blocks) or 64 KB; the blurred kite is larger.
        // In process (`--workers 0`): the limit also bounds the memory files shared with
        // workers, which would fail first.
        for (arguments, name) in [
            (["--filter", "gaussian sigma=1.5", "--workers", "0"], "banded.png"), ([], "whole.png"),
        ] {
            let output = folder.path + "/" + name
            let result = try Blurfarm.run(
                ["apply", Corpus.path("special/kite.webp"), output] + arguments, limits: ["-f 64"])
            #expect(result.status == 1, "status \(result.status): \(result.stderr)")
            #expect(result.stderr.contains("\(output): write failed: File too large"), "\(result.stderr)")
        }
        // With workers, sharing the pixels (a memory file as large as the image) is past the
        // limit too: a line, not a death.
        let pooled = try Blurfarm.run(
            ["apply", Corpus.path("special/kite.webp"), folder.path + "/pooled.png", "--filter", "gaussian sigma=1.5",
             "--workers", "1"],
            limits: ["-f 64"])
        #expect(pooled.status == 1, "status \(pooled.status): \(pooled.stderr)")
        #expect(pooled.stderr.contains("File too large"), "\(pooled.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [], "temporary files left")

        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.folder) }
        // 256 KB (`sh`'s `ulimit -f` counts 512-byte blocks): the job's records (an SQLite index, and the log its
        // migrations write as it is made) fit, the blurred kite (670 KB) does not.
        let run = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--workers", "0"], limits: ["-f 512"])
        #expect(run.status == 1, "status \(run.status): \(run.stderr)")
        #expect(run.stderr.contains("kite-blur.png: write failed: File too large"), "\(run.stderr)")
        let out = job.folder.appendingPathComponent("out").path
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == [], "temporary files left")
    }

    /// `apply` killed with SIGKILL while it writes its output band by band: the file it was
    /// writing has no name (O_TMPFILE), so nothing is left in the folder.
    @Test func aProcessKilledWhileItWritesLeavesNoFile() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A large noisy input: its output takes a while to encode, band by band.
        let input = folder.path + "/big.png"
        var generator = SplitMix(seed: 3)
        let pixels = PixelBuffer(rect: Rect(width: 3000, height: 2000))
        for y in 0..<2000 {
            for x in 0..<3000 {
                let v = Float(generator.next() % 256) / 255
                pixels[x, y] = SIMD4(v, 1 - v, v * v, 1)
            }
        }
        try ImageWriter.write(
            pixels, to: input, sourceBitDepth: 8, sourceHadAlpha: false, metadata: nil, options: EncodeOptions())
        let outFolder = folder.path + "/out"
        try FileManager.default.createDirectory(atPath: outFolder, withIntermediateDirectories: false)

        let process = Process()
        process.executableURL = Blurfarm.executable
        process.arguments = ["apply", input, outFolder + "/big-blur.png", "--filter", "gaussian sigma=2", "--workers", "0"]
        process.environment = Blurfarm.environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        // The moment it has a file open in the output folder, it is writing the output.
        let pid = process.processIdentifier
        try eventually("apply to open a file in the output folder", interval: .milliseconds(1)) {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            let writing = fds.contains { fd in
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) ?? ""
                return target.hasPrefix(outFolder + "/")
            }
            try #require(writing || process.isRunning, "apply ended before it opened a file in the output folder")
            return writing
        }
        kill(pid, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outFolder) == [], "a killed writer left a file")
    }
}
