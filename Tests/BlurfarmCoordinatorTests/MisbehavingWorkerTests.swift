import BlurfarmPool
import BlurfarmCore
import BlurfarmCoordinator
import BlurfarmEngine
import BlurfarmKernels
import BlurfarmTestSupport
import BlurfarmWire
import Foundation
import Testing

/// The pool against workers that misbehave in ways a real worker cannot be made to: fake
/// workers (shell scripts) that greet properly, wait for the first byte of their first task,
/// then send garbage, or a result whose checksum is wrong.
@Suite(.tags(.process), .blocking) struct MisbehavingWorkerTests {
    /// A folder with `hello-N.bin` (the frames `hello` and `ready` of worker N) for N in
    /// 1...20, `then.bin` (what the fake sends once it has a task) and `worker.sh`, the fake;
    /// after sending `then.bin` it runs `afterwards` (shell), by default waiting for its input
    /// to close.
    static func fakeWorker(then reply: [UInt8], afterwards: String = "exec cat >/dev/null") throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fake-worker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for id in UInt32(1)...20 {
            let frames = try FrameEncoder.encode(.hello(Hello(workerID: id, pid: 0))) + FrameEncoder.encode(.ready)
            try Data(frames).write(to: folder.appendingPathComponent("hello-\(id).bin"))
        }
        try Data(reply).write(to: folder.appendingPathComponent("then.bin"))
        // Called as: worker.sh --worker-id N --coordinator-pid P
        let script = folder.appendingPathComponent("worker.sh")
        try """
            #!/bin/sh
            cat '\(folder.path)/hello-'"$2"'.bin'
            dd bs=1 count=1 of=/dev/null 2>/dev/null
            cat '\(folder.path)/then.bin'
            \(afterwards)

            """.write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        return folder
    }

    static let chain = FilterChain(filters: [GaussianBlur(sigma: 1)], edge: .clamp, colour: .gamma)

    static func image() -> PixelBuffer {
        let image = PixelBuffer(rect: Rect(x: 0, y: 0, width: 40, height: 30), channels: 3)
        for y in 0..<30 { for x in 0..<40 { image[x, y] = SIMD4(Float(x) / 40, Float(y) / 30, 0.5, 1) } }
        return image
    }

    /// A worker executable that is missing, or not executable, fails the pool's start with its
    /// name and `posix_spawn`'s reason, not with the retries' message for a machine short of
    /// processes ("tried 6 times").
    @Test func aMissingOrNonExecutableWorkerExecutableFailsThePoolAtOnceByName() throws {
        let folder = try Self.fakeWorker(then: [])
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("blurfarm-worker").path
        let plain = folder.appendingPathComponent("then.bin").path  // a file without the x bit
        for (path, reason) in [(missing, "No such file or directory"), (plain, "Permission denied")] {
            #expect {
                _ = try WorkerPool(.init(scheduling: .init(workers: 2, retries: 0), executable: path))
            } throws: { error in
                (error as? RenderFailure)?.reason == .workersUnavailable(
                    "cannot start the workers: the worker executable \(path): \(reason)" + PoolScheduler.missingWorkerAdvice)
            }
        }
    }

    @Test func aLaunchedPoolWhoseWorkersCannotStartSaysSoWhenWaitedForEveryTime() throws {
        let folder = try Self.fakeWorker(then: [])
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("blurfarm-worker").path
        let pool = try WorkerPool(launching: .init(scheduling: .init(workers: 2, retries: 0), executable: missing))
        let expected = RenderFailure.Reason.workersUnavailable(
            "cannot start the workers: the worker executable \(missing): No such file or directory"
                + PoolScheduler.missingWorkerAdvice)
        for _ in 0..<2 {
            #expect { try pool.waitUntilStarted() } throws: { error in (error as? RenderFailure)?.reason == expected }
        }
        pool.shutdown()  // already shut down by the failed start: returns at once
    }

    @Test func aLaunchedPoolShutDownWhileItsWorkersStartStopsThem() throws {
        // A worker that never says hello: it writes its pid and sleeps (exec keeps the pid).
        let folder = try Self.fakeWorker(then: [])
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = folder.appendingPathComponent("silent.sh")
        try "#!/bin/sh\necho $$ > '\(folder.path)/pid-'\"$2\"\nexec sleep 1000\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let pool = try WorkerPool(launching: .init(scheduling: .init(workers: 1, retries: 0), executable: script.path))
        let pidFile = folder.appendingPathComponent("pid-1")
        var pid: Int32?
        try eventually("the worker's start") {
            pid = (try? String(contentsOf: pidFile, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            return pid != nil
        }
        let worker = try #require(pid)
        pool.shutdown()
        #expect(kill(worker, 0) == -1 && errno == ESRCH, "worker \(worker) outlived its pool's shutdown")
        #expect { try pool.waitUntilStarted() } throws: { error in
            (error as? RenderFailure)?.reason == .workersUnavailable("the pool was shut down while its workers started")
        }
    }

    @Test func aPoolThatBeganToShutDownTakesNoImageAndShutdownWaitsForItsWorkers() throws {
        let folder = try Self.fakeWorker(then: [])
        defer { try? FileManager.default.removeItem(at: folder) }
        let pool = try WorkerPool(.init(scheduling: .init(workers: 2, retries: 0), executable: folder.appendingPathComponent("worker.sh").path))
        pool.beginShutdown()
        #expect { _ = try pool.render(Self.image(), chain: Self.chain, tileSize: 0) } throws: { error in
            (error as? RenderFailure)?.reason == .poolShutDown
        }
        pool.shutdown()
        pool.shutdown()  // idempotent
        let pids = pool.workers.map(\.pid)
        #expect(pids.count == 2, "\(pool.workers)")
        #expect(pids.allSatisfy { kill($0, 0) == -1 && errno == ESRCH }, "workers \(pids) outlived the shutdown")
    }

    /// Workers that do not end when told to — their output open, closed, or written without
    /// end (the wait reads at most 16 times a wake, so it reaches its deadline): the pool's
    /// shutdown kills them after its 2 s and returns, none left (the wait for an end is the
    /// pipe's, then the process's).
    @Test(arguments: ["exec sleep 600", "exec sleep 600 >&-", "exec yes"])
    func workersThatIgnoreShutdownAreKilledAndReaped(afterwards: String) throws {
        let folder = try Self.fakeWorker(then: [], afterwards: afterwards)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pool = try WorkerPool(.init(scheduling: .init(workers: 2, retries: 0), executable: folder.appendingPathComponent("worker.sh").path))
        let pids = pool.workers.map(\.pid)
        #expect(pids.count == 2, "\(pool.workers)")
        pool.shutdown()
        #expect(pids.allSatisfy { kill($0, 0) == -1 && errno == ESRCH }, "workers \(pids) outlived the shutdown")
    }

    @Test func aWorkerThatSendsGarbageIsKilledAndReplacedUntilTheTileFails() throws {
        let folder = try Self.fakeWorker(then: Array("this is not a frame of the wire protocol".utf8))
        defer { try? FileManager.default.removeItem(at: folder) }
        let pool = try WorkerPool(.init(scheduling: .init(workers: 1, retries: 2), executable: folder.appendingPathComponent("worker.sh").path))
        defer { pool.shutdown() }
        do {
            _ = try pool.render(Self.image(), chain: Self.chain, tileSize: 0)
            Issue.record("garbage rendered an image")
        } catch {
            // Three workers, each killed after its garbage: the tile's three attempts, the last
            // on the third worker at least (a loaded machine may fail a start or two as well,
            // each taking a number: seen once, the last attempt on worker 4).
            let prefix = "tile 40x30+0+0 failed 3 times; the last time: worker "
            #expect(error.description.hasPrefix(prefix), "\(error)")
            let worker = Int(error.description.dropFirst(prefix.count).prefix { $0.isNumber }) ?? 0
            #expect(worker >= 3, "\(error)")
            #expect(error.description.contains("sent what does not decode"), "\(error)")
            #expect(error.description.hasSuffix("(killed by signal 9)"), "\(error)")
            #expect(error.retries == 2)
        }
    }

    @Test func aResultWithAWrongChecksumIsAFailedAttempt() throws {
        // The only worker's first task is task 1; the fake answers it with checksum 0.
        let reply = try FrameEncoder.encode(.result(TaskResult(taskID: 1, checksum: 0, elapsedNanoseconds: 0)))
            + FrameEncoder.encode(.ready)
        let folder = try Self.fakeWorker(then: reply)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pool = try WorkerPool(.init(scheduling: .init(workers: 1, retries: 0), executable: folder.appendingPathComponent("worker.sh").path))
        defer { pool.shutdown() }
        let source = Self.image()
        // The fake rendered nothing: the output segment, new, holds zeros.
        let image = Rect(x: 0, y: 0, width: 40, height: 30)
        let expected = PixelChecksum.of(PixelBuffer(rect: image, channels: 3), in: image)
        do {
            _ = try pool.render(source, chain: Self.chain, tileSize: 0)
            Issue.record("a wrong checksum was accepted")
        } catch {
            // Worker 1's, unless a loaded machine failed its start and a later number took the
            // slot (seen once with every core kept busy by other processes: worker 2).
            let prefix = "tile 40x30+0+0 failed 1 times; the last time: checksum mismatch: worker "
            let rest = error.description.dropFirst(prefix.count).drop { $0.isNumber }
            #expect(error.description.hasPrefix(prefix), "\(error)")
            #expect(rest == " sent 0, the output holds \(expected)", "\(error)")
        }
    }

    @Test func aFilterErrorFailsTheImageAtOnceWithTheWorkersMessage() throws {
        let reply = try FrameEncoder.encode(.failure(TaskFailure(taskID: 1, message: "plugin 'x': out of ideas")))
            + FrameEncoder.encode(.ready)
        let folder = try Self.fakeWorker(then: reply)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pool = try WorkerPool(.init(scheduling: .init(workers: 1, retries: 3), executable: folder.appendingPathComponent("worker.sh").path))
        defer { pool.shutdown() }
        do {
            _ = try pool.render(Self.image(), chain: Self.chain, tileSize: 0)
            Issue.record("a failed task rendered an image")
        } catch {
            // Not retried: a filter's error does not change on another try. Worker 1's, unless a
            // loaded machine failed its start and a later number took the slot (seen once, with
            // two runs of the suite at once on two cores: worker 2).
            let prefix = "tile 40x30+0+0: worker "
            #expect(error.description.hasPrefix(prefix), "\(error)")
            #expect(error.description.dropFirst(prefix.count).drop { $0.isNumber } == ": plugin 'x': out of ideas", "\(error)")
            #expect(error.retries == 0)
        }
    }

    /// When an image fails, a worker still rendering one of its tiles is killed before the
    /// caller gets the failure: otherwise it would go on writing into the image's segments,
    /// which the pool lends to the next image. Worker 1 fails its task once worker 2 has one;
    /// worker 2 "renders" until the test, holding the failure, says go, then writes into every
    /// segment of the pool. Killed in time, it never sees the go.
    ///
    /// Only worker 2 writes: the segments it finds are every one of this process, the pools of
    /// the tests running beside this one among them. The workers that replace it used to write
    /// too, once the pool's shutdown let them past their first byte, 8 bytes at the start of
    /// every segment: the band-invariance test's windows, rendered wrong now and then.
    @Test func aWorkerStillRenderingAFailedImageIsKilledBeforeItsMemoryIsLentAgain() throws {
        let reply = try FrameEncoder.encode(.failure(TaskFailure(taskID: 1, message: "boom"))) + FrameEncoder.encode(.ready)
        let folder = try Self.fakeWorker(
            then: [],
            afterwards: """
                here="$(dirname "$0")"
                wait_for() { i=0; while [ ! -e "$here/$1" ] && [ $i -lt 6000 ]; do sleep 0.02; i=$((i+1)); done; }
                if [ "$2" = 1 ]; then wait_for rendering-2; cat "$here/fail.bin"; exec cat >/dev/null; fi
                if [ "$2" != 2 ]; then exec cat >/dev/null; fi
                echo $$ > "$here/pid-$2.tmp" && mv "$here/pid-$2.tmp" "$here/rendering-$2"
                wait_for go
                for f in /proc/$4/fd/*; do
                  case "$(readlink $f)" in *blurfarm-pixels*) printf 'XXXXXXXX' | dd of=$f conv=notrunc 2>/dev/null ;; esac
                done
                touch "$here/wrote-$2"
                exec cat >/dev/null
                """)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(reply).write(to: folder.appendingPathComponent("fail.bin"))
        let pool = try WorkerPool(.init(scheduling: .init(workers: 2, retries: 0), executable: folder.appendingPathComponent("worker.sh").path))
        defer { pool.shutdown() }
        do {
            _ = try pool.render(Self.image(), chain: Self.chain, tileSize: 20)
            Issue.record("a failed task rendered an image")
        } catch {
            #expect(error.description.hasSuffix("worker 1: boom"), "\(error)")
        }
        // The next image's decode gets the pool's memory: one of the failed image's segments.
        let storage = try #require(pool.allocator!.storage(byteCount: 40 * 30 * 3 * 4))
        storage.withUnsafeFloats { p in for i in 0..<(40 * 30 * 3) { p[i] = 0 } }
        let rendering = try String(contentsOf: folder.appendingPathComponent("rendering-2"), encoding: .utf8)
        let pid = try #require(Int32(rendering.trimmingCharacters(in: .whitespacesAndNewlines)))
        try Data().write(to: folder.appendingPathComponent("go"))
        // Either it is gone (killed), or it sees the go and writes (not killed).
        let wrote = folder.appendingPathComponent("wrote-2").path
        try eventually("worker 2 (pid \(pid)) to end or write") {
            !Processes.isAlive(pid) || FileManager.default.fileExists(atPath: wrote)
        }
        #expect(!Processes.isAlive(pid), "worker 2 (pid \(pid)) still runs")
        #expect(!FileManager.default.fileExists(atPath: wrote), "a worker of the failed image wrote into the pool's memory")
        #expect(storage.withUnsafeFloats { $0[0] } == 0, "the leased memory was overwritten")
        // Nor does any worker write once the pool is shut down (a replacement, past its first
        // byte, the shutdown's).
        pool.shutdown()
        let writers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("wrote-") }
        #expect(writers.isEmpty, "workers wrote into every segment of this process: \(writers)")
    }
}
