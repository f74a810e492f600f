import BlurfarmTestSupport
import Foundation
import Testing

/// `--prune` that looks like a fault removes nothing unless forced; what it removes it lists,
/// with the empty folders it made (docs/scheduling.md, Pruning).
extension IncrementalRunTests {
    /// The files under `out/` of `job`, as paths relative to it (folders end with `/`).
    static func outputTree(_ job: JobFolder) -> Set<String> {
        guard let walker = FileManager.default.enumerator(atPath: job.path("out")) else { return [] }
        var tree: Set<String> = []
        while let next = walker.nextObject() as? String {
            var folder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: job.path("out/\(next)"), isDirectory: &folder)
            tree.insert(folder.boolValue ? next + "/" : next)
        }
        return tree
    }

    @Test func pruneWithTheInputFolderMissingRemovesNothingUnlessForced() throws {
        let job = try JobFolder.make(photos: 2, generated: 2)
        defer { try? FileManager.default.removeItem(at: job.root) }
        _ = try job.run()
        let before = Self.outputTree(job)
        let recorded = Self.recordedOutputs(job)
        try #require(recorded.count == 8)
        // The input folder is gone, as an unmounted share would be.
        try FileManager.default.moveItem(atPath: job.path("in"), toPath: job.path("unmounted"))

        let (refused, report) = try job.run(["--prune"])
        #expect(refused.status == 1, "\(refused.stderr)")
        // Both globs match nothing (two errors, with their count line), and the refusal.
        let lines = refused.stderr.split(separator: "\n")
        #expect(lines.count == 4, "\(refused.stderr)")
        #expect(lines.prefix(2).allSatisfy { 
            $0.contains(": error: the input glob 'in/*.")
                && $0.hasSuffix("' matches no file: the folder '\(job.path("in"))' does not exist (a glob is relative to the manifest's folder)")
        }, "\(refused.stderr)")
        #expect(
            lines[3].hasPrefix("blurfarm: error: cron: --prune refused: input folder '")
                && lines[3].contains("/in' of 'in/*.jpg' is missing (4 recorded outputs would be removed)"),
            "\(refused.stderr)")
        #expect(report.pruned.isEmpty)
        #expect(Self.outputTree(job) == before)
        #expect(Self.recordedOutputs(job) == recorded)

        // Said explicitly: everything goes, with the folders blurfarm made.
        // The job's globs still match nothing: an error, though every output went.
        let (forced, forcedReport) = try job.run(["--force-prune"])
        #expect(forced.status == 1 && forced.stderr.contains("matches no file"), "\(forced.stderr)")
        #expect(forcedReport.pruned.count == 8)
        #expect(Self.outputTree(job).isEmpty, "\(Self.outputTree(job))")
        #expect(!FileManager.default.fileExists(atPath: job.path("out")))
        #expect(Self.recordedOutputs(job).isEmpty)
    }

    @Test func pruneWhenAGlobSuddenlyMatchesNothingRemovesNothingUnlessForced() throws {
        let job = try JobFolder.make(photos: 3, generated: 2)
        defer { try? FileManager.default.removeItem(at: job.root) }
        _ = try job.run()
        let before = Self.outputTree(job)
        for i in 0..<2 { try FileManager.default.removeItem(atPath: job.path("in/gen\(i).ppm")) }

        let (refused, _) = try job.run(["--prune"])
        #expect(refused.status == 1)
        #expect(
            refused.stderr == "\(job.path("job.job")):2:20: warning: the input glob 'in/*.ppm' matches no file in '\(job.path("in"))'\n"
                + "blurfarm: error: cron: --prune refused: input glob 'in/*.ppm' matches no file "
                + "(4 recorded outputs would be removed); nothing removed (--force-prune removes them)\n",
            "\(refused.stderr)")
        #expect(Self.outputTree(job) == before)

        let (forced, forcedReport) = try job.run(["--force-prune"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forcedReport.pruned.count == 4)

        // The glob still matches nothing, but no recorded output of it is left to remove: an
        // ordinary prune goes ahead.
        try FileManager.default.removeItem(atPath: job.path("in/photo0.jpg"))
        let (later, laterReport) = try job.run(["--prune"])
        #expect(
            later.status == 0 && later.stderr.hasSuffix(": warning: the input glob 'in/*.ppm' matches no file in '\(job.path("in"))'\n"),
            "\(later.stderr)")
        #expect(Set(laterReport.pruned.map { $0.split(separator: "/").suffix(2).joined(separator: "/") })
            == ["thumb/photo0.jpg", "blur/photo0.jpg"])
    }

    @Test func pruneOfMoreThanHalfTheRecordedOutputsRemovesNothingUnlessForced() throws {
        let job = try JobFolder.make(photos: 4, generated: 1)
        defer { try? FileManager.default.removeItem(at: job.root) }
        _ = try job.run()
        let before = Self.outputTree(job)
        for i in 0..<3 { try FileManager.default.removeItem(atPath: job.path("in/photo\(i).jpg")) }

        let (refused, _) = try job.run(["--prune"])
        #expect(refused.status == 1)
        #expect(
            refused.stderr == "blurfarm: error: cron: --prune refused: it would remove 6 of the 10 recorded outputs, "
                + "more than half; nothing removed (--force-prune removes them)\n", "\(refused.stderr)")
        #expect(Self.outputTree(job) == before)

        let (forced, forcedReport) = try job.run(["--force-prune"])
        #expect(forced.status == 0 && forcedReport.pruned.count == 6, "\(forced.stderr)")
    }

    @Test func pruneVerboseListsWhatItRemovedWithTheEmptyFoldersBlurfarmMade() throws {
        let job = JobFolder(root: try Fixtures.temporaryFolder())
        defer { try? FileManager.default.removeItem(at: job.root) }
        var random = SplitMix(seed: 9)
        let folders = ["a", "b", "c", "d", "e", "f", "g"]
        for (i, name) in folders.enumerated() {
            try FileManager.default.createDirectory(atPath: job.path("in/\(name)"), withIntermediateDirectories: true)
            try Self.ppm(width: 20 + i, height: 16, using: &random).write(to: URL(fileURLWithPath: job.path("in/\(name)/x.ppm")))
        }
        try "state: state\n".write(toFile: job.config, atomically: true, encoding: .utf8)
        try """
            job: cron
            inputs: [in/**/*.ppm]
            outputs:
              - name: copy
                path: out/{relpath}/{stem}.png

            """.write(toFile: job.manifest, atomically: true, encoding: .utf8)
        // A folder that was there before: never removed, though it ends empty.
        try FileManager.default.createDirectory(atPath: job.path("out/c"), withIntermediateDirectories: true)
        let (first, _) = try job.run()
        try #require(first.status == 0, "\(first.stderr)")
        // A folder blurfarm made that holds a file of someone else's: never removed.
        try "notes".write(toFile: job.path("out/d/notes.txt"), atomically: true, encoding: .utf8)
        for name in ["a", "c", "d"] { try FileManager.default.removeItem(atPath: job.path("in/\(name)/x.ppm")) }

        let (pruning, report) = try job.run(["--prune", "--verbose"])
        #expect(pruning.status == 0 && pruning.stderr.isEmpty, "\(pruning.stderr)")
        let out = job.path("out")
        let listed = pruning.stdout.split(separator: "\n").filter { $0.hasPrefix("pruned ") }
        #expect(Set(listed) == ["pruned \(out)/a/x.png", "pruned \(out)/c/x.png", "pruned \(out)/d/x.png", "pruned \(out)/a/"],
            "\(pruning.stdout)")
        #expect(report.pruned.count == 3)
        #expect(Self.outputTree(job) == [
            "b/", "b/x.png", "c/", "d/", "d/notes.txt", "e/", "e/x.png", "f/", "f/x.png", "g/", "g/x.png",
        ], "\(Self.outputTree(job))")

        // Once the file is gone, the folder blurfarm made goes too, at the next prune, with
        // the others it leaves empty.
        try FileManager.default.removeItem(atPath: job.path("out/d/notes.txt"))
        for name in ["b", "e"] { try FileManager.default.removeItem(atPath: job.path("in/\(name)/x.ppm")) }
        let (again, _) = try job.run(["--prune", "--verbose"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Self.outputTree(job) == ["c/", "f/", "f/x.png", "g/", "g/x.png"], "\(Self.outputTree(job))")
        #expect(again.stdout.split(separator: "\n").filter { $0.hasSuffix("/") }.sorted()
            == ["pruned \(out)/b/", "pruned \(out)/d/", "pruned \(out)/e/"], "\(again.stdout)")
    }

    @Test func aPrunedNameCannotForgeALine() throws {
        let job = JobFolder(root: try Fixtures.temporaryFolder())
        defer { try? FileManager.default.removeItem(at: job.root) }
        try FileManager.default.createDirectory(atPath: job.path("in"), withIntermediateDirectories: true)
        var random = SplitMix(seed: 12)
        for name in ["x\npruned forged", "y", "z"] {
            try Self.ppm(width: 10, height: 8, using: &random).write(to: URL(fileURLWithPath: job.path("in/\(name).ppm")))
        }
        try "state: state\n".write(toFile: job.config, atomically: true, encoding: .utf8)
        try "job: cron\ninputs: [in/*.ppm]\noutputs:\n  - name: copy\n    path: out/{stem}.png\n"
            .write(toFile: job.manifest, atomically: true, encoding: .utf8)
        let (first, _) = try job.run()
        try #require(first.status == 0, "\(first.stderr)")
        try FileManager.default.removeItem(atPath: job.path("in/x\npruned forged.ppm"))
        let (pruning, _) = try job.run(["--prune", "--verbose"])
        #expect(pruning.status == 0, "\(pruning.stderr)")
        let listed = pruning.stdout.split(separator: "\n").filter { $0.hasPrefix("pruned ") }
        #expect(listed == ["pruned \(job.path("out"))/x\\npruned forged.png"], "\(pruning.stdout)")
    }
}
