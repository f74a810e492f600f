import BlurfarmCore
import Testing

@testable import BlurfarmCoordinator
@testable import BlurfarmPool
import BlurfarmEngine

/// The pool's decisions, transition by transition, with no process: each test drives a
/// ``PoolScheduler`` with events and checks the actions it answers.
@Suite struct PoolSchedulerTests {
    typealias Action = PoolScheduler.Action
    let t0 = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int(seconds * 1000)) }

    /// A scheduler of `workers` workers, all started, greeted and idle.
    func running(
        workers: Int = 2, retries: Int = 1, taskTimeout: TaskTimeout = .fixed(.seconds(5)), tasksHeld: Int = 1
    ) -> PoolScheduler {
        var scheduler = PoolScheduler(
            settings: .init(
                workers: workers, retries: retries, heartbeatTimeout: .seconds(10), taskTimeout: taskTimeout,
                tasksHeld: tasksHeld))
        let starts = scheduler.start(at: t0)
        #expect(starts == (1...workers).map { .startWorker(UInt32($0)) })
        for id in 1...UInt32(workers) {
            _ = scheduler.handle(.workerSpawned(id, pid: 100 + Int32(id)), at: t0)
            _ = scheduler.handle(.hello(id), at: t0)
        }
        for id in 1...UInt32(workers) { _ = scheduler.handle(.ready(id), at: t0) }
        #expect(scheduler.hasStarted)
        return scheduler
    }

    func image(tiles: Int, priority: Int = 0, job: UInt64 = 1, id: UInt64 = 1) -> PoolScheduler.Image {
        PoolScheduler.Image(
            tiles: (0..<tiles).map { Rect(x: $0 * 10, y: 0, width: 10, height: 10) },
            pixelsRead: Array(repeating: 100, count: tiles),
            order: .init(priority: priority, job: job, image: id))
    }

    /// A task's result, then its checksum checked: the actions of both.
    func answer(
        _ scheduler: inout PoolScheduler, _ worker: UInt32, _ task: UInt64, mismatch: String? = nil,
        at instant: ContinuousClock.Instant
    ) -> [Action] {
        scheduler.handle(.result(worker, task), at: instant)
            + scheduler.handle(.verified(task, checksumMismatch: mismatch), at: instant)
    }

    func sends(_ actions: [Action]) -> [(PoolScheduler.TileTask, UInt32)] {
        actions.compactMap { if case .send(let task, let worker) = $0 { (task, worker) } else { nil } }
    }

    func finishes(_ actions: [Action]) -> [(UInt64, Result<Int, RenderFailure>)] {
        actions.compactMap { if case .finish(let image, let result) = $0 { (image, result) } else { nil } }
    }

    @Test func startingWorkersThatSayHelloAndReadyStartThePool() {
        var scheduler = PoolScheduler(settings: .init(workers: 2))
        #expect(scheduler.start(at: t0) == [.startWorker(1), .startWorker(2)])
        _ = scheduler.handle(.workerSpawned(1, pid: 11), at: t0)
        _ = scheduler.handle(.workerSpawned(2, pid: 12), at: t0)
        _ = scheduler.handle(.hello(1), at: t0)
        #expect(scheduler.handle(.ready(1), at: t0).contains(.started) == false)
        _ = scheduler.handle(.hello(2), at: t0)
        #expect(scheduler.handle(.ready(2), at: t0).contains(.started))
        #expect(scheduler.workers[1]?.state == .idle && scheduler.workers[2]?.state == .idle)
    }

    @Test func queuedTilesGoToIdleWorkersWhoBecomeBusy() {
        var scheduler = running()
        let actions = scheduler.handle(.imageQueued(1, image(tiles: 3)), at: at(1))
        let sent = sends(actions)
        #expect(sent.map(\.1) == [1, 2])
        #expect(sent.map(\.0.tile.x) == [0, 10])
        #expect(scheduler.workers[1]?.state == .busy(task: sent[0].0.task, since: at(1)))
    }

    @Test func readyAfterAVerifiedResultTakesTheNextTileAndTheLastFinishesTheImage() {
        var scheduler = running(workers: 1)
        let first = sends(scheduler.handle(.imageQueued(1, image(tiles: 2)), at: t0))[0].0
        #expect(answer(&scheduler, 1, first.task, mismatch: nil, at: at(1)).contains(.progress(1, done: 1, total: 2)))
        let second = sends(scheduler.handle(.ready(1), at: at(1)))[0].0
        #expect(second.tile.x == 10)
        let done = answer(&scheduler, 1, second.task, mismatch: nil, at: at(2))
        #expect(finishes(done).map(\.0) == [1])
        #expect(finishes(done).first?.1 == .success(0))
    }

    @Test func readyAfterAnUncheckedResultTakesTheNextTileBeforeTheChecksumIsChecked() {
        var scheduler = running(workers: 1)
        let first = sends(scheduler.handle(.imageQueued(1, image(tiles: 2)), at: t0))[0].0
        #expect(scheduler.handle(.result(1, first.task), at: at(1)).isEmpty)
        #expect(sends(scheduler.handle(.ready(1), at: at(1))).first?.0.tile.x == 10)
        // The image is not done before its first tile is checked, and a mismatch retries it.
        let checked = scheduler.handle(.verified(first.task, checksumMismatch: "worker 1 sent 0"), at: at(1))
        #expect(finishes(checked).isEmpty)
        #expect(checked.contains { if case .notice(.tileRetried(1, _, 1, _)) = $0 { true } else { false } })
    }

    @Test func tilesOfAHigherPriorityJobAreSentFirst() {
        var scheduler = running(workers: 1)
        let busy = sends(scheduler.handle(.imageQueued(1, image(tiles: 1, priority: 0, job: 1, id: 1)), at: t0))[0].0
        _ = scheduler.handle(.imageQueued(2, image(tiles: 2, priority: 0, job: 1, id: 2)), at: t0)
        _ = scheduler.handle(.imageQueued(3, image(tiles: 2, priority: 50, job: 2, id: 3)), at: t0)
        _ = answer(&scheduler, 1, busy.task, mismatch: nil, at: at(1))
        #expect(sends(scheduler.handle(.ready(1), at: at(1))).first?.0.image == 3)
    }

    @Test func equalPriorityTilesGoInArrivalOrder() {
        var scheduler = running(workers: 1)
        _ = scheduler.handle(.imageQueued(5, image(tiles: 1, job: 2, id: 5)), at: t0)
        let busy = scheduler.workers[1]!.state
        guard case .busy(let task, _) = busy else { Issue.record("not busy"); return }
        _ = scheduler.handle(.imageQueued(6, image(tiles: 1, job: 1, id: 6)), at: t0)
        _ = scheduler.handle(.imageQueued(7, image(tiles: 1, job: 2, id: 7)), at: t0)
        _ = answer(&scheduler, 1, task, mismatch: nil, at: at(1))
        // Job 1 arrived before job 2.
        #expect(sends(scheduler.handle(.ready(1), at: at(1))).first?.0.image == 6)
    }

    @Test func raisingAJobsPriorityMovesItsQueuedTilesAhead() {
        var scheduler = running(workers: 1)
        let busy = sends(scheduler.handle(.imageQueued(1, image(tiles: 1, job: 1, id: 1)), at: t0))[0].0
        _ = scheduler.handle(.imageQueued(2, image(tiles: 1, job: 1, id: 2)), at: t0)
        _ = scheduler.handle(.imageQueued(3, image(tiles: 1, job: 2, id: 3)), at: t0)
        _ = scheduler.handle(.jobReprioritised(job: 2, priority: 90), at: t0)
        _ = answer(&scheduler, 1, busy.task, mismatch: nil, at: at(1))
        #expect(sends(scheduler.handle(.ready(1), at: at(1))).first?.0.image == 3)
    }

    @Test func busyWorkerThatTimesOutIsKilledAndItsTileRequeued() {
        var scheduler = running(workers: 1)
        let task = sends(scheduler.handle(.imageQueued(1, image(tiles: 1)), at: t0))[0].0
        _ = scheduler.handle(.heartbeat(1), at: at(4))
        let actions = scheduler.handle(.tick, at: at(5.5))
        #expect(actions.contains { if case .kill(1, let reason) = $0 { reason.contains("task timeout") } else { false } })
        #expect(scheduler.workers[1]?.state == .stopping)
        // Gone: the tile goes back with attempt 2, and a replacement is started.
        let after = scheduler.handle(.workerExited(1, exit: "killed by signal 9"), at: at(5.5))
        #expect(after.contains(.startWorker(2)))
        _ = scheduler.handle(.workerSpawned(2, pid: 102), at: at(5.5))
        _ = scheduler.handle(.hello(2), at: at(5.6))
        let retry = sends(scheduler.handle(.ready(2), at: at(5.6)))
        #expect(retry.first?.0.tile == task.tile && retry.first?.0.attempt == 2 && retry.first?.1 == 2)
    }

    @Test func silentBusyWorkerIsKilledAfterTheHeartbeatTimeout() {
        var scheduler = running(workers: 1, taskTimeout: .fixed(.seconds(100)))
        _ = scheduler.handle(.imageQueued(1, image(tiles: 1)), at: t0)
        #expect(scheduler.handle(.tick, at: at(9)).isEmpty)
        #expect(scheduler.handle(.tick, at: at(10.5)).contains { if case .kill(1, _) = $0 { true } else { false } })
    }

    @Test func heartbeatsKeepABusyWorkerAlive() {
        var scheduler = running(workers: 1, taskTimeout: .fixed(.seconds(100)))
        _ = scheduler.handle(.imageQueued(1, image(tiles: 1)), at: t0)
        for second in stride(from: 5.0, through: 30, by: 5) {
            _ = scheduler.handle(.heartbeat(1), at: at(second))
            #expect(scheduler.handle(.tick, at: at(second + 1)).isEmpty)
        }
    }

    @Test func idleWorkersAreNeverTimedOut() {
        var scheduler = running(workers: 2)
        #expect(scheduler.handle(.tick, at: at(3600)).isEmpty)
    }

    @Test func tileThatFailsMoreThanTheRetryLimitFailsItsImage() {
        var scheduler = running(workers: 1, retries: 1)
        _ = scheduler.handle(.imageQueued(1, image(tiles: 1)), at: t0)
        _ = scheduler.handle(.workerFailed(1, reason: "closed its output"), at: at(1))
        var actions = scheduler.handle(.workerExited(1, exit: "exit status 1"), at: at(1))
        #expect(actions.contains(.startWorker(2)))
        _ = scheduler.handle(.workerSpawned(2, pid: 102), at: at(1))
        _ = scheduler.handle(.hello(2), at: at(1))
        _ = scheduler.handle(.ready(2), at: at(1))
        _ = scheduler.handle(.workerFailed(2, reason: "closed its output"), at: at(2))
        actions = scheduler.handle(.workerExited(2, exit: "exit status 1"), at: at(2))
        guard case .failure(let failure) = finishes(actions).first?.1 else {
            Issue.record("the image did not fail: \(actions)")
            return
        }
        #expect(failure.retries == 1)
        #expect(failure.description.hasPrefix("tile 10x10+0+0 failed 2 times; the last time: worker 2 (pid 102) closed its output"))
    }

    @Test func checksumMismatchRetriesTheTileOnAnotherWorker() {
        var scheduler = running(workers: 2, retries: 2)
        let sent = sends(scheduler.handle(.imageQueued(1, image(tiles: 1)), at: t0))
        #expect(sent.map(\.1) == [1])
        _ = answer(&scheduler, 1, sent[0].0.task, mismatch: "worker 1 sent 0", at: at(1))
        // Worker 2 is idle: it takes the retry, not worker 1 when it says ready.
        #expect(sends(scheduler.handle(.ready(1), at: at(1))).isEmpty)
        #expect(scheduler.workers[2]?.state != .idle)
    }

    @Test func failureReplyFailsTheImageAtOnceAndTheWorkerGoesOn() {
        var scheduler = running(workers: 1, retries: 3)
        let task = sends(scheduler.handle(.imageQueued(1, image(tiles: 2)), at: t0))[0].0
        let actions = scheduler.handle(.failure(1, task.task, message: "plugin 'x': out of ideas"), at: at(1))
        #expect(finishes(actions).first?.1 == .failure(RenderFailure(
            .filter(tile: task.tile, worker: 1, message: "plugin 'x': out of ideas"))))
        #expect(!actions.contains { if case .kill = $0 { true } else { false } })
        _ = scheduler.handle(.ready(1), at: at(1))
        #expect(scheduler.workers[1]?.state == .idle)
    }

    @Test func failedImagesOtherBusyWorkersAreKilledAndReplaced() {
        var scheduler = running(workers: 2, retries: 3)
        let sent = sends(scheduler.handle(.imageQueued(1, image(tiles: 2)), at: t0))
        let actions = scheduler.handle(.failure(1, sent[0].0.task, message: "boom"), at: at(1))
        #expect(actions.contains { if case .kill(2, _) = $0 { true } else { false } })
        #expect(finishes(actions).isEmpty, "finished while worker 2 could still write into it")
        let gone = scheduler.handle(.workerExited(2, exit: "killed by signal 9"), at: at(1))
        #expect(finishes(gone).map(\.0) == [1])
        #expect(gone.contains(.startWorker(3)))
    }

    @Test func cancelledJobsQueuedTilesLeaveTheQueue() {
        var scheduler = running(workers: 1)
        let busy = sends(scheduler.handle(.imageQueued(1, image(tiles: 1, job: 1, id: 1)), at: t0))[0].0
        _ = scheduler.handle(.imageQueued(2, image(tiles: 5, job: 2, id: 2)), at: t0)
        let cancelled = scheduler.handle(.jobCancelled(job: 2), at: at(1))
        #expect(finishes(cancelled).first?.1 == .failure(RenderFailure(.cancelled)))
        _ = answer(&scheduler, 1, busy.task, mismatch: nil, at: at(1))
        #expect(sends(scheduler.handle(.ready(1), at: at(1))).isEmpty)
    }

    @Test func cancelledJobsBusyWorkersAreSentCancelAndKeepRunning() {
        var scheduler = running(workers: 2)
        let sent = sends(scheduler.handle(.imageQueued(1, image(tiles: 4, job: 7)), at: t0))
        let actions = scheduler.handle(.jobCancelled(job: 7), at: at(1))
        #expect(actions.contains(.cancel(sent[0].0.task, on: 1)) && actions.contains(.cancel(sent[1].0.task, on: 2)))
        #expect(!actions.contains { if case .kill = $0 { true } else { false } })
        // It finishes only once the last cancelled task is answered (ready, no result).
        #expect(finishes(actions).isEmpty)
        #expect(finishes(scheduler.handle(.ready(1), at: at(1))).isEmpty)
        #expect(finishes(scheduler.handle(.ready(2), at: at(2))).first?.1 == .failure(RenderFailure(.cancelled)))
        #expect(scheduler.workers.values.allSatisfy { $0.state == .idle })
    }

    @Test func readyWithoutAnAnswerIsAFailedAttempt() {
        var scheduler = running(workers: 1, retries: 1)
        let task = sends(scheduler.handle(.imageQueued(1, image(tiles: 1)), at: t0))[0].0
        let retry = sends(scheduler.handle(.ready(1), at: at(1)))
        #expect(retry.first?.0.tile == task.tile && retry.first?.0.attempt == 2)
    }

    @Test func helloFromAGreetedWorkerKillsIt() {
        var scheduler = running(workers: 1)
        #expect(scheduler.handle(.hello(1), at: at(1)) == [.kill(1, reason: "sent an unexpected hello")])
    }

    @Test func workerThatCannotBeSpawnedIsRetriedWithBackoff() {
        var scheduler = PoolScheduler(settings: .init(workers: 1, startAttempts: 3))
        #expect(scheduler.start(at: t0) == [.startWorker(1)])
        // Each retry told (an operator's log at `info`), with its backoff: 100 ms, then doubled.
        func retried(_ attempt: Int, in milliseconds: Int64) -> [Action] {
            [.notice(.workerStartRetried(
                worker: 1, workers: 1, attempt: attempt, attempts: 3, backoff: .milliseconds(milliseconds),
                problem: "pipe: Too many open files"))]
        }
        #expect(scheduler.handle(.workerSpawnFailed(1, .shortOf("pipe: Too many open files")), at: t0) == retried(1, in: 100))
        #expect(scheduler.handle(.tick, at: at(0.05)).isEmpty)
        #expect(scheduler.handle(.tick, at: at(0.1)) == [.startWorker(2)])
        #expect(
            scheduler.handle(.workerSpawnFailed(2, .shortOf("pipe: Too many open files")), at: at(0.1)) == retried(2, in: 200))
        #expect(scheduler.handle(.tick, at: at(0.25)).isEmpty)
        #expect(scheduler.handle(.tick, at: at(0.3)) == [.startWorker(3)])
        let failed = scheduler.handle(.workerSpawnFailed(3, .shortOf("pipe: Too many open files")), at: at(0.3))
        #expect(failed == [.startFailed(
            "cannot start worker 1 of 1: pipe: Too many open files (tried 3 times); lower --workers or raise the limit")])
    }

    @Test func workerWhoseExecutableCannotRunFailsTheStartAtOnce() {
        var scheduler = PoolScheduler(settings: .init(workers: 2, startAttempts: 3))
        #expect(scheduler.start(at: t0) == [.startWorker(1), .startWorker(2)])
        let failed = scheduler.handle(
            .workerSpawnFailed(1, .executable("/opt/x/blurfarm-worker: No such file or directory")), at: t0)
        // At the first failure, where one for want of processes waits to be tried again.
        #expect(failed == [.startFailed(
            "cannot start the workers: the worker executable /opt/x/blurfarm-worker: No such file or directory"
                + PoolScheduler.missingWorkerAdvice)])
    }

    @Test func workersThatKeepDyingBeforeHelloFailTheStart() {
        var scheduler = PoolScheduler(settings: .init(workers: 1))
        var next = scheduler.start(at: t0)
        var failed: [Action] = []
        for _ in 0..<10 {
            guard case .startWorker(let id) = next.first else { break }
            _ = scheduler.handle(.workerSpawned(id, pid: 1), at: t0)
            _ = scheduler.handle(.workerFailed(id, reason: "closed its output"), at: t0)
            next = scheduler.handle(.workerExited(id, exit: "exit status 71"), at: t0)
            failed = next.filter { if case .startFailed = $0 { true } else { false } }
            if !failed.isEmpty { break }
            next = next.filter { if case .startWorker = $0 { true } else { false } }
        }
        #expect(failed.count == 1)
    }

    @Test func poolThatLostEveryWorkerAfterStartUpFailsImagesThenRestartsWithBackoff() {
        var scheduler = running(workers: 1)
        _ = scheduler.handle(.workerFailed(1, reason: "closed its output"), at: t0)
        var next = scheduler.handle(.workerExited(1, exit: "exit status 1"), at: t0)
        // Four replacements die before their hello: an outage.
        for _ in 0..<4 {
            guard case .startWorker(let id) = next.first(where: { if case .startWorker = $0 { true } else { false } })
            else { break }
            _ = scheduler.handle(.workerSpawned(id, pid: 1), at: t0)
            _ = scheduler.handle(.workerFailed(id, reason: "closed its output"), at: t0)
            next = scheduler.handle(.workerExited(id, exit: "exit status 71"), at: t0)
        }
        #expect(scheduler.outage != nil)
        #expect(next.contains { if case .notice(.workersCannotStart) = $0 { true } else { false } })
        // Meanwhile images fail at once…
        let failed = scheduler.handle(.imageQueued(9, image(tiles: 1)), at: at(0.5))
        #expect(finishes(failed).count == 1)
        // …and after the backoff the workers are started again.
        #expect(scheduler.handle(.tick, at: at(0.5)).isEmpty)
        #expect(scheduler.handle(.tick, at: at(1.1)).contains { if case .startWorker = $0 { true } else { false } })
    }

    @Test func shutdownFailsEveryImageAndStopsTheWorkers() {
        var scheduler = running(workers: 1)
        _ = scheduler.handle(.imageQueued(1, image(tiles: 3)), at: t0)
        let actions = scheduler.handle(.shutdown, at: at(1))
        #expect(actions.firstIndex(of: .stopWorkers)! < actions.firstIndex { if case .finish = $0 { true } else { false } }!)
        #expect(finishes(actions).first?.1 == .failure(RenderFailure(.poolShutDown)))
        #expect(scheduler.handle(.imageQueued(2, image(tiles: 1)), at: at(2)).contains(
            .finish(2, .failure(RenderFailure(.poolShutDown)))))
    }

    // Two tasks a worker (the pool's default): the next is sent before the `ready`.

    @Test func eachIdleWorkerTakesOneTaskBeforeAnyTakesItsSecond() {
        var scheduler = running(workers: 2, tasksHeld: 2)
        let sent = sends(scheduler.handle(.imageQueued(1, image(tiles: 5)), at: t0))
        #expect(sent.map(\.1) == [1, 2, 1, 2])
        #expect(scheduler.workers[1]?.state == .busy(task: sent[0].0.task, since: t0))
        #expect(scheduler.workers[1]?.waiting == [sent[2].0.task])
        #expect(scheduler.workers[2]?.waiting == [sent[3].0.task])
    }

    @Test func readyStartsTheWaitingTaskAndRefillsTheWorker() {
        var scheduler = running(workers: 1, tasksHeld: 2)
        let sent = sends(scheduler.handle(.imageQueued(1, image(tiles: 3)), at: t0))
        #expect(sent.map(\.0.task) == [1, 2])
        _ = answer(&scheduler, 1, 1, at: at(1))
        let refill = sends(scheduler.handle(.ready(1), at: at(2)))
        #expect(scheduler.workers[1]?.state == .busy(task: 2, since: at(2)), "the waiting task runs from the ready")
        #expect(refill.map(\.0.task) == [3])
        #expect(scheduler.workers[1]?.waiting == [3])
        _ = answer(&scheduler, 1, 2, at: at(3))
        #expect(sends(scheduler.handle(.ready(1), at: at(3))).isEmpty)
        let last = answer(&scheduler, 1, 3, at: at(4))
        #expect(finishes(last).map(\.0) == [1])
        _ = scheduler.handle(.ready(1), at: at(4))
        #expect(scheduler.workers[1]?.state == .idle && scheduler.workers[1]?.waiting == [])
    }

    @Test func aWaitingTaskIsTimedFromTheReadyBeforeIt() {
        var scheduler = running(workers: 1, taskTimeout: .fixed(.seconds(5)), tasksHeld: 2)
        _ = scheduler.handle(.imageQueued(1, image(tiles: 2)), at: t0)
        _ = answer(&scheduler, 1, 1, at: at(4))
        _ = scheduler.handle(.ready(1), at: at(4))
        // Sent at 0, running from 4: not over the 5 s limit at 8, over it at 10.
        #expect(!scheduler.handle(.heartbeat(1), at: at(8)).contains { if case .kill = $0 { true } else { false } })
        _ = scheduler.handle(.tick, at: at(8))
        #expect(scheduler.handle(.tick, at: at(10)).contains { if case .kill(1, _) = $0 { true } else { false } })
    }

    @Test func aLostWorkersRunningTaskIsAFailedAttemptAndItsWaitingTaskGoesBackUncounted() {
        var scheduler = running(workers: 1, retries: 0, tasksHeld: 2)
        let sent = sends(scheduler.handle(.imageQueued(1, image(tiles: 2, job: 1, id: 1)), at: t0))
        _ = scheduler.handle(.imageQueued(2, image(tiles: 1, job: 2, id: 2)), at: t0)
        #expect(sent.map(\.0.task) == [1, 2] && sent.allSatisfy { $0.0.image == 1 })
        _ = scheduler.handle(.workerFailed(1, reason: "crashed"), at: at(1))
        let gone = scheduler.handle(.workerExited(1, exit: "killed by signal 11"), at: at(1))
        // The running tile used its one attempt: image 1 fails; image 2 waits for the new worker.
        #expect(finishes(gone).map(\.0) == [1])
        #expect(gone.contains(.startWorker(2)))
        _ = scheduler.handle(.workerSpawned(2, pid: 102), at: at(1))
        _ = scheduler.handle(.hello(2), at: at(1))
        let next = sends(scheduler.handle(.ready(2), at: at(1)))
        #expect(next.map(\.0.image) == [2] && next.map(\.0.attempt) == [1])
    }

    @Test func aWaitingTaskOfALostWorkerKeepsItsAttemptNumber() {
        var scheduler = running(workers: 1, retries: 0, tasksHeld: 2)
        let sent = sends(scheduler.handle(.imageQueued(1, image(tiles: 1, job: 1, id: 1)), at: t0))
            + sends(scheduler.handle(.imageQueued(2, image(tiles: 1, job: 2, id: 2)), at: t0))
        #expect(sent.map(\.0.image) == [1, 2])
        _ = scheduler.handle(.workerFailed(1, reason: "crashed"), at: at(1))
        let gone = scheduler.handle(.workerExited(1, exit: "killed by signal 11"), at: at(1))
        #expect(finishes(gone).map(\.0) == [1], "only the running task's image fails")
        _ = scheduler.handle(.workerSpawned(2, pid: 102), at: at(1))
        _ = scheduler.handle(.hello(2), at: at(1))
        let retry = sends(scheduler.handle(.ready(2), at: at(1)))
        #expect(retry.map(\.0.image) == [2] && retry.map(\.0.attempt) == [1])
        _ = answer(&scheduler, 2, retry[0].0.task, at: at(2))
        #expect(finishes(scheduler.handle(.ready(2), at: at(2))).isEmpty)
    }

    @Test func aFailedImagesWaitingTaskIsCancelledAndItsWorkerKept() {
        var scheduler = running(workers: 1, retries: 3, tasksHeld: 2)
        let first = sends(scheduler.handle(.imageQueued(1, image(tiles: 1, job: 1, id: 1)), at: t0))
        let second = sends(scheduler.handle(.imageQueued(2, image(tiles: 1, job: 2, id: 2)), at: t0))
        #expect(first.map(\.0.task) == [1] && second.map(\.0.task) == [2])
        // Image 2's filter cannot fail before it runs; image 2 fails through its job instead,
        // and image 1's running task fails its own image with a filter error.
        let failed = scheduler.handle(.failure(1, 1, message: "boom"), at: at(1))
        #expect(finishes(failed).map(\.0) == [1])
        #expect(!failed.contains { if case .kill = $0 { true } else { false } })
        // The worker moves on to task 2 at its ready.
        _ = scheduler.handle(.ready(1), at: at(1))
        #expect(scheduler.workers[1]?.state == .busy(task: 2, since: at(1)))
        let cancelled = scheduler.handle(.jobCancelled(job: 2), at: at(2))
        #expect(cancelled.contains(.cancel(2, on: 1)))
        #expect(finishes(scheduler.handle(.ready(1), at: at(3))).map(\.0) == [2])
    }

    @Test func aFailingImageCancelsItsTaskWaitingInAWorkerRunningAnotherImage() {
        var scheduler = running(workers: 2, retries: 3, tasksHeld: 2)
        // Worker 1 runs image 1's tile; worker 2 runs image 2's first tile; worker 1 then holds
        // image 2's second tile, waiting.
        let a = sends(scheduler.handle(.imageQueued(1, image(tiles: 1, job: 1, id: 1)), at: t0))
        let b = sends(scheduler.handle(.imageQueued(2, image(tiles: 2, job: 2, id: 2)), at: t0))
        #expect(a.map(\.1) == [1] && b.map(\.1) == [2, 1])
        let actions = scheduler.handle(.failure(2, b[0].0.task, message: "boom"), at: at(1))
        #expect(actions.contains(.cancel(b[1].0.task, on: 1)), "the waiting task is cancelled")
        #expect(!actions.contains { if case .kill(1, _) = $0 { true } else { false } }, "worker 1 runs image 1: kept")
        #expect(finishes(actions).isEmpty, "worker 1 still holds image 2's task")
        #expect(finishes(answer(&scheduler, 1, a[0].0.task, at: at(2))).map(\.0) == [1])
        #expect(finishes(scheduler.handle(.ready(1), at: at(2))).isEmpty, "the waiting task runs (to be dropped)")
        #expect(finishes(scheduler.handle(.ready(1), at: at(3))).map(\.0) == [2], "the dropped task's ready")
    }

    @Test func aCancelledTasksLateFailureReplyFinishesItsImage() {
        var scheduler = running(workers: 1)
        let sent = sends(scheduler.handle(.imageQueued(1, image(tiles: 1, job: 7)), at: t0))
        #expect(finishes(scheduler.handle(.jobCancelled(job: 7), at: at(1))).isEmpty)
        // The worker failed the tile before the cancel reached it.
        let late = scheduler.handle(.failure(1, sent[0].0.task, message: "boom"), at: at(2))
        #expect(finishes(late).first?.1 == .failure(RenderFailure(.cancelled)))
    }

    @Test func aFailedImagesWaitingTaskThatRanBeforeItsCancelCameFinishesTheImage() {
        // Every tile of image 1 fails (a plugin's error); worker 2 is killed for running one,
        // worker 1 runs its waiting task before the cancel reaches it and fails it too.
        var scheduler = running(workers: 2, retries: 3, tasksHeld: 2)
        let sent = sends(scheduler.handle(.imageQueued(1, image(tiles: 4)), at: t0))
        #expect(sent.map(\.1) == [1, 2, 1, 2])
        let failed = scheduler.handle(.failure(1, sent[0].0.task, message: "boom"), at: at(1))
        #expect(failed.contains(.cancel(sent[2].0.task, on: 1)))
        _ = scheduler.handle(.workerExited(2, exit: "killed by signal 9"), at: at(1))
        _ = scheduler.handle(.ready(1), at: at(2))
        let late = scheduler.handle(.failure(1, sent[2].0.task, message: "boom"), at: at(3))
        #expect(finishes(late).map(\.0) == [1])
    }

    @Test func shutdownKillsWorkersNotYetGreetedAndStopsTheOthers() {
        var scheduler = PoolScheduler(settings: .init(workers: 2))
        _ = scheduler.start(at: t0)
        _ = scheduler.handle(.workerSpawned(1, pid: 11), at: t0)
        _ = scheduler.handle(.workerSpawned(2, pid: 12), at: t0)
        _ = scheduler.handle(.hello(1), at: at(1))
        let actions = scheduler.handle(.shutdown, at: at(1))
        #expect(actions == [.kill(2, reason: "was stopped before it started"), .stopWorkers])
    }
}
