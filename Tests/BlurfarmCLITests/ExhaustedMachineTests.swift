import BlurfarmCore
import BlurfarmTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An exhausted machine (docs/security.md, "An exhausted machine"): workers that cannot be
/// started end the run within seconds with one line saying why and the lock released; SIGTERM
/// during a start that is retrying ends it at once; and the number of workers is capped.
///
/// How the descriptors run out: a capped `--workers` leaves room for every worker's pipes under
/// any `ulimit -n` (that is the cap's job), so the run inherits descriptors that the cap cannot
/// see. A Python launcher sets `RLIMIT_NOFILE` to 256, opens `/dev/null` (inheritable) until
/// only 16 descriptors are free, and becomes blurfarm: the run's own files (lock, records, ...)
/// fit, and the workers' pipes fail with EMFILE at a later worker. The launcher also unblocks
/// every signal (the test runner's blocked mask is inherited otherwise).
@Suite(.tags(.process), .blocking) struct ExhaustedMachineTests {
    static let launcher = """
        import os, resource, signal, sys
        signal.pthread_sigmask(signal.SIG_SETMASK, [])  # as cron or a shell starts it, not the test runner
        limit, free = 256, 16
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
        while True:
            fd = os.open('/dev/null', os.O_RDONLY)
            os.set_inheritable(fd, True)
            if fd >= limit - free - 1:
                break
        os.execv(sys.argv[1], sys.argv[1:])
        """

    /// A job folder with two small photos and its configuration.
    static func makeJob() throws -> (folder: URL, manifest: String, config: String) {
        let folder = try Fixtures.temporaryFolder()
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        for file in ["special/kite.webp", "special/grayscale.jpg"] {
            try FileManager.default.copyItem(
                atPath: Corpus.path(file), toPath: photos.appendingPathComponent((file as NSString).lastPathComponent).path)
        }
        let (manifest, config) = try Fixtures.writeBlurJob(named: "exhausted", in: folder)
        return (folder, manifest, config)
    }

    /// A started process, its standard error collected as it comes, killed by `watchdog`
    /// seconds if it is still running then (a hang fails the test instead of the test run).
    final class Started: @unchecked Sendable {
        let process = Process()
        let err = Pipe()
        let began = ContinuousClock.now
        /// Standard error so far, and whether it has ended.
        private let collected = Mutex((text: "", ended: false))

        init(_ arguments: [String], starvedOfDescriptors: Bool, watchdog: Double = 120) throws {
            if starvedOfDescriptors {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["python3", "-c", ExhaustedMachineTests.launcher, Blurfarm.executable.path] + arguments
            } else {
                process.executableURL = Blurfarm.executable
                process.arguments = arguments
            }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = err
            try process.run()
            Thread.detachNewThread { [self] in
                while case let data = err.fileHandleForReading.availableData, !data.isEmpty {
                    collected.withLock { $0.text += String(decoding: data, as: UTF8.self) }
                }
                collected.withLock { $0.ended = true }
            }
            let process = self.process
            DispatchQueue.global().asyncAfter(deadline: .now() + watchdog) {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            }
        }

        /// Standard error so far.
        var standardError: String { collected.withLock { $0.text } }

        /// Waits for the exit: the status, standard error and the seconds since the start.
        func finish() throws -> (status: Int32, stderr: String, seconds: Double) {
            process.waitUntilExit()
            let seconds = (ContinuousClock.now - began).seconds
            try eventually("standard error to end") { collected.withLock { $0.ended } }
            return (process.terminationStatus, standardError, seconds)
        }
    }

    @Test func workersWithoutDescriptorsEndTheRunWithOneLineAndReleaseTheLock() throws {
        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.folder) }
        let run = try Started(["run", job.manifest, "--config", job.config, "--workers", "4"], starvedOfDescriptors: true)
        let (status, stderr, seconds) = try run.finish()
        print("run without descriptors for its workers: exit \(status) after \(seconds) s: \(stderr)")
        #expect(status == 1, "\(stderr)")
        #expect(stderr.split(separator: "\n").count == 1, "\(stderr)")
        #expect(stderr.hasPrefix("blurfarm: error: cannot start "), "\(stderr)")
        #expect(stderr.contains("pipe: Too many open files"), "\(stderr)")
        // The lock is free: the next run takes it and does the work.
        let next = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--workers", "1"])
        #expect(next.status == 0, "\(next.stderr)")
        #expect(next.stdout.contains("exhausted: 2 written"), "\(next.stdout)")
    }

    @Test func sigtermWhileWorkerStartsAreRetriedEndsTheRunAtOnce() throws {
        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.folder) }
        let run = try Started(
            ["run", job.manifest, "--config", job.config, "--workers", "4", "--log-level", "info"], starvedOfDescriptors: true)
        // Out of descriptors, the pool tries a worker's start again after 100 ms, then 200, 400,
        // 800 and 1,600 (about 3 s in all), each retry on the log at `info`: the signal comes
        // after the first.
        try eventually("a worker's start retried: \(run.standardError)") {
            run.standardError.contains("; trying again in 100 ms (try 1 of 6)") || !run.process.isRunning
        }
        #expect(run.process.isRunning, "the run ended before it was signalled: \(run.standardError)")
        let signalled = ContinuousClock.now
        kill(run.process.processIdentifier, SIGTERM)
        let (status, stderr, _) = try run.finish()
        print("SIGTERM during a retrying start: exit \(status) \((ContinuousClock.now - signalled).seconds) s after the signal")
        #expect(status == 128 + SIGTERM, "\(stderr)")
        #expect(stderr.contains("blurfarm: stopping"), "\(stderr)")
        #expect(!stderr.contains("error"), "\(stderr)")
        let next = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--workers", "1"])
        #expect(next.status == 0, "\(next.stderr)")
    }

    @Test func workersAreCappedWithOneWarning() throws {
        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.folder) }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let run = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--workers", "100000"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr == "blurfarm: warning: 100000 workers (--workers) capped at \(4 * cores): at most 4 per core, "
                + "\(cores) cores\n")

        // The configuration's workers, under a descriptor limit that leaves room for 3.
        try "state: state\nworkers: 100000\n".write(toFile: job.config, atomically: true, encoding: .utf8)
        let limited = try Blurfarm.run(["run", job.manifest, "--config", job.config, "--force"], limits: ["-n 31"])
        #expect(limited.status == 0, "\(limited.stderr)")
        let expected = min(3, 4 * cores)
        let reason = expected == 3
            ? "ulimit -n 31 leaves room for that many (2 descriptors each, 25 kept)" : "at most 4 per core, \(cores) cores"
        #expect(
            limited.stderr == "blurfarm: warning: 100000 workers (the configuration's workers) capped at \(expected): \(reason)\n")

        // apply, and a limit that leaves room for none.
        let output = job.folder.appendingPathComponent("apply.png").path
        let none = try Blurfarm.run(
            ["apply", Corpus.path("special/kite.webp"), output, "--filter", "gaussian sigma=1", "--workers", "2"],
            limits: ["-n 24"])
        #expect(none.status == 1)
        #expect(
            none.stderr == "blurfarm: error: cannot run worker processes: ulimit -n 24 leaves room for that many "
                + "(2 descriptors each, 25 kept); --workers 0 renders in this process\n")
        let applied = try Blurfarm.run([
            "apply", Corpus.path("special/kite.webp"), output, "--filter", "gaussian sigma=1", "--workers", "100000",
        ])
        #expect(applied.status == 0 && applied.stderr.contains("capped at \(4 * cores)"), "\(applied.stderr)")
    }
}

/// `ulimit -u`. RLIMIT_NPROC counts every task (threads too) of the process's real user, and
/// the kernel checks it in `clone`: that is what makes `posix_spawn` fail (EAGAIN), and thread
/// creation too. It does not apply to root (CAP_SYS_RESOURCE), so the test runs blurfarm as a
/// user it creates (`useradd`) and removes. Tried here: with other processes of the user
/// taking all but a few of its tasks, libvips's threads ("glib: Error creating thread") fail as
/// soon as worker spawns do, depending on how many threads each has at that moment; so the
/// worker count is capped from the limit (4 tasks per worker, 16 kept) before anything starts,
/// and a limit that leaves room for no worker ends the run at once with one line.
extension ExhaustedMachineTests {
    static let user = "blurfarm-nproc-test"

    /// Runs `arguments` as ``user`` with `RLIMIT_NPROC` at `processes`, through Python.
    static func runAsUser(_ arguments: [String], processes: Int) throws -> CommandResult {
        let launcher = """
            import os, pwd, resource, sys
            user = pwd.getpwnam('\(user)')
            os.setgroups([]); os.setgid(user.pw_gid); os.setuid(user.pw_uid)
            resource.setrlimit(resource.RLIMIT_NPROC, (\(processes), \(processes)))
            os.execv(sys.argv[1], sys.argv[1:])
            """
        return try Blurfarm.run(arguments, launcher: launcher)
    }

    /// Runs a system command (useradd, userdel, chown); its status.
    @discardableResult
    static func system(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to create a user"), .tags(.root))
    func aProcessLimitCapsTheWorkersOrEndsTheRunWithOneLine() throws {
        try Self.system(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", Self.user])
        defer { _ = try? Self.system(["userdel", Self.user]) }
        let job = try Self.makeJob()
        defer { try? FileManager.default.removeItem(at: job.folder) }
        #expect(try Self.system(["chown", "-R", Self.user, job.folder.path]) == 0)
        let arguments = ["run", job.manifest, "--config", job.config, "--workers", "8"]

        let none = try Self.runAsUser(arguments, processes: 24)
        #expect(none.status == 1, "\(none.stderr)")
        #expect(
            none.stderr == "blurfarm: error: cannot run worker processes: ulimit -u 24 leaves room for that many "
                + "(4 threads each, 24 kept); --workers 0 renders in this process\n")

        let cores = ProcessInfo.processInfo.activeProcessorCount
        let capped = try Self.runAsUser(arguments, processes: 40)
        #expect(capped.status == 0, "\(capped.stderr)")
        let reason = 4 * cores > 4 ? "ulimit -u 40 leaves room for that many (4 threads each, 24 kept)" : "at most 4 per core, 1 cores"
        #expect(capped.stderr == "blurfarm: warning: 8 workers (--workers) capped at 4: \(reason)\n")
        #expect(capped.stdout.contains("exhausted: 2 written"), "\(capped.stdout)")
    }
}

