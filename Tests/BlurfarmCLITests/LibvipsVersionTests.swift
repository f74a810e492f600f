import BlurfarmCommandSupport
import BlurfarmFarm
import BlurfarmImageIO
import BlurfarmState
import BlurfarmTestSupport
import Foundation
import Testing

/// `run`'s recipes name the version of the libvips the workers load without this process
/// mapping libvips: a worker says it (`blurfarm-worker --libvips-version`), and the state
/// folder keeps it while the dynamic loader would find the same file.
@Suite(.tags(.process), .blocking) struct LibvipsVersionTests {
    /// A fresh state folder (removed by the caller).
    static func stateFolder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("libvips-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.path
    }

    static let worker = BuiltExecutable.worker.path
    static let environment = ProcessInfo.processInfo.environment

    @Test func aWorkerSaysTheVersionThisProcessLoadsAndTheStateFolderKeepsIt() throws {
        let state = try Self.stateFolder()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let asked = LibvipsVersion(stateFolder: state, worker: Self.worker, environment: Self.environment)
        #expect(asked.version == ImageReader.libvipsVersion && asked.source == .worker)
        #expect(FileManager.default.fileExists(atPath: state + "/" + LibvipsVersionCache.fileName))
        // Kept: a worker that cannot run is not asked.
        let kept = LibvipsVersion(stateFolder: state, worker: Self.worker, environment: Self.environment)
        #expect(kept.version == ImageReader.libvipsVersion && kept.source == .cache)
        #expect(LibvipsVersionCache.version(inStateFolder: state, worker: Self.worker, environment: Self.environment)
            == ImageReader.libvipsVersion)
    }

    /// The version kept is not used once the loader might find another file: another
    /// `LD_LIBRARY_PATH` or `LD_PRELOAD`, a searched folder changed (a library put in it),
    /// another worker executable; nor when the file is garbled.
    @Test func theVersionKeptHoldsOnlyWhileTheLoaderWouldFindTheSameFile() throws {
        let state = try Self.stateFolder()
        let searched = try Self.stateFolder()
        defer {
            try? FileManager.default.removeItem(atPath: state)
            try? FileManager.default.removeItem(atPath: searched)
        }
        var environment = Self.environment
        environment["LD_LIBRARY_PATH"] = searched
        let asked = LibvipsVersion(stateFolder: state, worker: Self.worker, environment: environment)
        #expect(asked.source == .worker)
        func kept(_ environment: [String: String], worker: String = Self.worker) -> String? {
            LibvipsVersionCache.version(inStateFolder: state, worker: worker, environment: environment)
        }
        #expect(kept(environment) == ImageReader.libvipsVersion)
        var other = environment
        other["LD_LIBRARY_PATH"] = searched + ":/usr/local/lib"
        #expect(kept(other) == nil, "another LD_LIBRARY_PATH")
        other = environment
        other["LD_PRELOAD"] = "/usr/local/lib/libvips.so.42"
        #expect(kept(other) == nil, "an LD_PRELOAD")
        #expect(kept(environment, worker: BuiltExecutable.url.path) == nil, "another worker executable")
        // A worker that cannot be started has no answer: the caller maps libvips itself.
        let refused = LibvipsVersion(stateFolder: state, worker: "/nonexistent/blurfarm-worker", environment: other)
        #expect(refused.version == nil && refused.source == .none)
        // A library put in a searched folder.
        try Data("not a library".utf8).write(to: URL(fileURLWithPath: searched + "/libvips.so.42"))
        #expect(kept(environment) == nil, "a searched folder changed")
        try FileManager.default.removeItem(atPath: searched + "/libvips.so.42")
        _ = LibvipsVersion(stateFolder: state, worker: Self.worker, environment: environment).version
        #expect(kept(environment) == ImageReader.libvipsVersion)
        try Data("{\"version\":".utf8).write(to: URL(fileURLWithPath: state + "/" + LibvipsVersionCache.fileName))
        #expect(kept(environment) == nil, "garbled")
    }

    /// What the worker prints is read strictly: a version, an absolute file, the folders.
    @Test func aWorkerThatFailsOrSaysSomethingElseHasNoAnswer() throws {
        let state = try Self.stateFolder()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let scripts = ["exit 3", "echo unavailable", "echo 8.14; echo lib.so", "printf '8.x.1\\n/lib/libvips.so.42\\n'"]
        for script in scripts {
            let path = state + "/worker.sh"
            try Data("#!/bin/sh\n\(script)\n".utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
            let answer = LibvipsVersion(stateFolder: state, worker: path, environment: Self.environment)
            #expect(answer.version == nil && answer.source == .none, "\(script)")
        }
        #expect(!FileManager.default.fileExists(atPath: state + "/" + LibvipsVersionCache.fileName))
        // A report of a file that is not the one there now (replaced meanwhile): used, not kept.
        let file = "/lib/x86_64-linux-gnu/libvips.so.42"
        let real = URL(fileURLWithPath: file).resolvingSymlinksInPath().path
        let inode = try #require((try FileManager.default.attributesOfItem(atPath: real))[.systemFileNumber] as? UInt64)
        for (mapped, kept) in [(inode + 1, false), (inode, true)] {
            let path = state + "/worker.sh"
            try Data("#!/bin/sh\nprintf '8.14.1\\n\(file)\\n\(mapped)\\n/lib\\n'\n".utf8).write(to: URL(fileURLWithPath: path))
            let answer = LibvipsVersion(stateFolder: state, worker: path, environment: Self.environment)
            #expect(answer.version == "8.14.1" && answer.source == .worker)
            #expect(FileManager.default.fileExists(atPath: state + "/" + LibvipsVersionCache.fileName) == kept, "\(mapped)")
        }
    }

    /// ``LibvipsVersion/end(stopped:)``, at a run's end: a worker that has not answered yet is
    /// waited for (its answer is the run's), or, when a signal stopped the run, killed; reaped
    /// either way, so that it does not outlive the run.
    @Test func theWorkerAskedEndsWithTheRun() throws {
        let state = try Self.stateFolder()
        defer { try? FileManager.default.removeItem(atPath: state) }
        func script(_ name: String, _ body: String) throws -> String {
            let path = state + "/" + name
            try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
            return path
        }
        // A worker that answers after a moment (of a file that is not there: used, not kept).
        let slow = try script("slow.sh", "sleep 0.3\nprintf '8.14.1\\n/nonexistent/libvips.so.42\\n1\\n/lib\\n'")
        let waited = LibvipsVersion(stateFolder: state, worker: slow, environment: Self.environment)
        waited.end(stopped: false)
        #expect(waited.source == .worker && waited.version == "8.14.1")
        // A worker that never answers, and says which process it is.
        let said = state + "/pid"
        let silent = try script("silent.sh", "echo $$ > '\(said).tmp'; mv '\(said).tmp' '\(said)'; exec sleep 600")
        let stopped = LibvipsVersion(stateFolder: state, worker: silent, environment: Self.environment)
        var pid: Int32?
        try eventually("the worker asked") {
            pid = (try? String(contentsOfFile: said, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            return pid != nil
        }
        stopped.end(stopped: true)
        #expect(stopped.source == .none && stopped.version == nil)
        // Reaped: no such process (a zombie still answers signal 0).
        let asked = try #require(pid)
        #expect(kill(asked, 0) == -1 && errno == ESRCH, "the worker \(asked) outlived the run")
    }

    /// `blurfarm-worker --libvips-version` prints the version, the library's file as the
    /// loader found it (a real file) and the folders it searches.
    @Test func theWorkersReport() throws {
        let run = try Blurfarm.run(["-c", "exec \"$0\" --libvips-version", Self.worker], shell: true)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == ImageReader.libvipsVersion)
        try #require(lines.count > 3, "\(lines)")
        let real = URL(fileURLWithPath: lines[1]).resolvingSymlinksInPath().path
        let inode = (try FileManager.default.attributesOfItem(atPath: real))[.systemFileNumber] as? UInt64
        #expect(inode.map(String.init) == lines[2], "the inode of the file mapped: \(lines)")
        #expect(LibvipsReport(text: run.stdout) != nil)
    }
}
