import BlurfarmTestSupport
import Foundation
import Testing

/// Input globs through the executable: globs that match nothing are named with their place in
/// the manifest, case-sensitivity and its alternatives, and hidden files left out.
@Suite(.tags(.process), .blocking) struct GlobTests {
    /// A folder with `photos/` holding `files` (each a copy of a small corpus JPEG, or bytes
    /// that are no image when its name starts with `._`), and `job.job` taking `inputs`.
    static func makeJob(inputs: String, files: [String]) throws -> URL {
        let folder = try Fixtures.temporaryFolder()
        for file in files {
            let target = folder.appendingPathComponent("photos/" + file)
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            if target.lastPathComponent.hasPrefix("._") {
                try Data("AppleDouble, not a JPEG".utf8).write(to: target)
            } else {
                try FileManager.default.copyItem(atPath: Fixtures.corpus("special/grayscale.jpg"), toPath: target.path)
            }
        }
        let manifest = """
            job: globs
            inputs: \(inputs)
            outputs:
              - name: small
                path: out/{relpath}/{stem}.png
                resize:
                  width: 16

            """
        try manifest.write(to: folder.appendingPathComponent("job.job"), atomically: true, encoding: .utf8)
        return folder
    }

    @Test func aGlobThatMatchesNothingIsAWarningWhenAnotherMatched() throws {
        let folder = try Self.makeJob(inputs: "[photos/*.JPG, photos/*.jpg]", files: ["a.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let check = try Blurfarm.run(["check", job])
        #expect(check.status == 1, "\(check.stderr)")
        #expect(check.stderr.contains("\(job):2:10: warning: the input glob 'photos/*.JPG' matches no file in '\(folder.path)/photos'\n"), "\(check.stderr)")
        #expect(!check.stderr.contains("photos/*.jpg'"), "\(check.stderr)")
        let run = try Blurfarm.run(["run", job])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("\(job):2:10: warning: the input glob 'photos/*.JPG' matches no file in '\(folder.path)/photos'\n"), "\(run.stderr)")
        #expect(run.stdout.contains("globs: 1 written"), "\(run.stdout)")
    }

    @Test func globsThatAllMatchNothingAreErrors() throws {
        let folder = try Self.makeJob(inputs: "[photos/*.png, photos/*.tif]", files: ["a.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        for command in ["check", "run"] {
            let result = try Blurfarm.run([command, job])
            #expect(result.status == 1, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("\(job):2:10: error: the input glob 'photos/*.png' matches no file in '\(folder.path)/photos'\n"), "\(result.stderr)")
            #expect(result.stderr.contains("\(job):2:24: error: the input glob 'photos/*.tif' matches no file in '\(folder.path)/photos'\n"), "\(result.stderr)")
        }
    }

    @Test func aGlobWhoseFilesAreAllExcludedSaysSo() throws {
        let folder = try Self.makeJob(inputs: "[photos/*.jpg]\nexclude: [photos/a.*]", files: ["a.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try Blurfarm.run(["check", folder.appendingPathComponent("job.job").path])
        #expect(check.status == 1)
        #expect(check.stderr.contains("error: the input glob 'photos/*.jpg' matches only files that are left out"), "\(check.stderr)")
    }

    @Test func globsAreCaseSensitiveAndAlternativesMatchEverySpelling() throws {
        let folder = try Self.makeJob(inputs: "[photos/*.jpg]", files: ["IMG_0042.JPG", "b.jpeg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job")
        let strict = try Blurfarm.run(["check", job.path])
        #expect(strict.status == 1)
        #expect(strict.stderr.contains("error: the input glob 'photos/*.jpg' matches no file in '\(folder.path)/photos'\n"), "\(strict.stderr)")
        #expect(strict.stderr.contains(
            "note: globs are case-sensitive: 'photos/IMG_0042.JPG' matches but for case"), "\(strict.stderr)")

        let text = try String(contentsOf: job, encoding: .utf8)
        try text.replacingOccurrences(of: "[photos/*.jpg]", with: "['photos/*.{jpg,JPG,jp{e,}g}']")
            .write(to: job, atomically: true, encoding: .utf8)
        let check = try Blurfarm.run(["check", job.path])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("2 inputs"), "\(check.stdout)")
        let run = try Blurfarm.run(["run", job.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/IMG_0042.png").path))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/b.png").path))
    }

    @Test func hiddenFilesAndFoldersAreLeftOutUnlessNamed() throws {
        let folder = try Self.makeJob(
            inputs: "[photos/**/*.jpg]", files: ["a.jpg", "._a.jpg", "trip/b.jpg", "trip/._b.jpg", ".thumbs/c.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job")
        let run = try Blurfarm.run(["run", job.path])
        // The AppleDouble files are not images: taking them would fail the run.
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("globs: 2 written"), "\(run.stdout)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/.thumbs").path))

        let text = try String(contentsOf: job, encoding: .utf8)
        try text.replacingOccurrences(of: "[photos/**/*.jpg]", with: "[photos/**/*.jpg, photos/.thumbs/*.jpg]")
            .write(to: job, atomically: true, encoding: .utf8)
        let named = try Blurfarm.run(["run", job.path])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(named.stdout.contains("globs: 1 written"), "\(named.stdout)")
    }

    /// A glob whose folder is missing says so, with the folder it looked in and what globs are
    /// relative to: the mistake of a manifest saved in another folder than its recipe expects.
    @Test func aGlobWhoseFolderIsMissingNamesTheFolderItLookedIn() throws {
        let folder = try Self.makeJob(inputs: "[photos/*.jpg, pictures/**/*.jpg]", files: ["a.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = folder.appendingPathComponent("job.job").path
        let check = try Blurfarm.run(["check", job])
        #expect(check.status == 1)
        #expect(check.stderr.contains(
            "\(job):2:24: warning: the input glob 'pictures/**/*.jpg' matches no file: the folder "
                + "'\(folder.path)/pictures' does not exist (a glob is relative to the manifest's folder)\n"),
            "\(check.stderr)")
    }

    /// Absolute input globs: matched as written, whatever the manifest's folder, with
    /// `{relpath}` below their fixed folder; their outputs are left out of the inputs as a
    /// relative glob's are; one that matches nothing names its folder.
    @Test func absoluteInputGlobsWorkWhereverTheManifestIs() throws {
        let folder = try Self.makeJob(inputs: "[x]", files: ["a.jpg", "trip/b.jpg"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let jobs = folder.appendingPathComponent("jobs")
        try FileManager.default.createDirectory(at: jobs, withIntermediateDirectories: true)
        let manifest = """
            job: absolute
            inputs: ['\(folder.path)/photos/**/*.jpg', '\(folder.path)/pictures/*.jpg']
            outputs:
              - name: small
                path: '\(folder.path)/photos/small/{relpath}/{stem}.jpg'
                resize:
                  width: 16

            """
        let job = jobs.appendingPathComponent("absolute.job").path
        try manifest.write(toFile: job, atomically: true, encoding: .utf8)
        let run = try Blurfarm.run(["run", job])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("absolute: 2 written"), "\(run.stdout)")
        #expect(run.stderr.contains(
            "warning: the input glob '\(folder.path)/pictures/*.jpg' matches no file: the folder "
                + "'\(folder.path)/pictures' does not exist\n"), "\(run.stderr)")
        for written in ["photos/small/a.jpg", "photos/small/trip/b.jpg"] {
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(written).path), "\(written)")
        }
        // The outputs, below the inputs' folder, are not inputs of the next run.
        let again = try Blurfarm.run(["run", job])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!again.stdout.contains("written"), "\(again.stdout)")
        let check = try Blurfarm.run(["check", job])
        #expect(check.stdout.contains("2 inputs"), "\(check.stdout)")
    }
}
