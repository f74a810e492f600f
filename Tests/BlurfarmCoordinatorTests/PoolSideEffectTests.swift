import BlurfarmPool
import BlurfarmCore
import BlurfarmCoordinator
import BlurfarmEngine
import BlurfarmKernels
import BlurfarmTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// SIGPIPEs that reached this process's handler.
private let brokenPipes = Atomic<Int>(0)
private let countBrokenPipes: @convention(c) (Int32) -> Void = { _ in brokenPipes.add(1, ordering: .relaxed) }

/// The SIGPIPE handler of this process, as an address.
private func brokenPipeHandler() -> Int {
    var current = sigaction()
    sigaction(SIGPIPE, nil, &current)
    return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
}

/// The pool changes nothing of its process: no signal disposition, no environment of its own
/// choosing for the workers.
@Suite(.serialized, .tags(.process), .blocking) struct PoolSideEffectTests {
    @Test func aWriteToAWorkerThatClosedItsInputFailsThatWorkerAndLeavesSIGPIPEAlone() throws {
        // A handler of our own, so that a SIGPIPE reaching the process is counted, not fatal.
        let previous = signal(SIGPIPE, countBrokenPipes)
        defer { signal(SIGPIPE, previous) }
        let ours = brokenPipeHandler()
        brokenPipes.store(0, ordering: .relaxed)
        // The fake worker reads the first byte of its task, closes its input and stays alive
        // (silent, with no timeout to end it): the pool's next write to it (the job's `cancel`)
        // meets a pipe with no reader.
        let folder = try MisbehavingWorkerTests.fakeWorker(
            then: [], afterwards: "exec 0<&-; touch \"$(dirname \"$0\")/closed\"; exec sleep 120")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pool = try WorkerPool(.init(
            scheduling: .init(workers: 1, retries: 0, heartbeatTimeout: .seconds(3600), taskTimeout: .fixed(.seconds(3600))),
            executable: folder.appendingPathComponent("worker.sh").path))
        defer { pool.shutdown() }
        #expect(brokenPipeHandler() == ours, "starting the pool changed the process's SIGPIPE handler")
        let outcome = Mutex<Result<RenderedImage, RenderFailure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let result = Result { () throws(RenderFailure) -> RenderedImage in
                try pool.render(
                    MisbehavingWorkerTests.image(), chain: MisbehavingWorkerTests.chain, tileSize: 0,
                    ticket: RenderTicket(job: 3))
            }
            outcome.withLock { $0 = result }
            done.signal()
        }.start()
        let closed = folder.appendingPathComponent("closed").path
        try eventually("the worker to close its input") { FileManager.default.fileExists(atPath: closed) }
        pool.cancel(job: 3)
        #expect(done.wait(timeout: .now() + 120) == .success)
        guard case .failure(let failure) = outcome.withLock({ $0 }) else {
            Issue.record("the cancelled image rendered")
            return
        }
        #expect(failure.reason == .cancelled)
        #expect(brokenPipes.load(ordering: .relaxed) == 0, "a SIGPIPE reached the process")
        #expect(brokenPipeHandler() == ours, "the pool changed the process's SIGPIPE handler")
    }

    @Test func theWorkersGetTheEnvironmentThePoolIsGivenNotTheProcesss() throws {
        let folder = try MisbehavingWorkerTests.fakeWorker(then: [], afterwards: "env > \"$(dirname \"$0\")/env-$2.txt\"")
        defer { try? FileManager.default.removeItem(at: folder) }
        let notices = Mutex<[String]>([])
        setenv("BLURFARM_PROCESS_ONLY", "1", 1)
        defer { unsetenv("BLURFARM_PROCESS_ONLY") }
        let pool = try WorkerPool(.init(
            scheduling: .init(workers: 1, retries: 0),
            executable: folder.appendingPathComponent("worker.sh").path,
            environment: ["PATH=/usr/bin:/bin", "BLURFARM_GIVEN=yes"]),
            onNotice: { notice in notices.withLock { $0.append("\(notice)") } })
        defer { pool.shutdown() }
        // The fake writes its environment and exits: the render fails once the worker is lost,
        // after the write. The file is named by the worker's id, which is not always 1: a start
        // the pool retries (the notices say why) starts worker 2. Every file written is checked.
        _ = try? pool.render(MisbehavingWorkerTests.image(), chain: MisbehavingWorkerTests.chain, tileSize: 0)
        let written = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasPrefix("env-") && $0.hasSuffix(".txt")
        }
        try #require(!written.isEmpty, "no worker wrote its environment; the pool's notices: \(notices.withLock { $0 })")
        for file in written {
            let environment = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let names = Set(environment.split(separator: "\n").map { $0.split(separator: "=")[0] })
            #expect(names.contains("BLURFARM_GIVEN"), "\(file)")
            #expect(names.contains("SWIFT_BACKTRACE"), "\(file): a crashing worker prints one line, not a backtrace")
            #expect(!names.contains("BLURFARM_PROCESS_ONLY") && !names.contains("HOME"), "\(file): \(names.sorted())")
        }
    }
}
