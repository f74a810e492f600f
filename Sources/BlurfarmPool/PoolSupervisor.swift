import BlurfarmSystem
import BlurfarmCore
import BlurfarmWire
import Logging

/// The pool's thread: feeds what happens to the ``PoolScheduler`` and does what it answers,
/// with the worker processes' pipes and the images' requests. Owned by that thread alone.
struct PoolSupervisor {
    /// A worker process's end of the conversation.
    struct Slot {
        let pid: Int32
        let input: Int32
        let output: Int32
        var decoder = FrameDecoder()
    }

    let pool: WorkerPool
    var scheduler: PoolScheduler
    var slots: [PoolScheduler.WorkerID: Slot] = [:]
    var requests: [PoolScheduler.ImageID: PoolRequest] = [:]
    let launcher: WorkerLauncher
    var logger: Logger { pool.settings.logger }
    /// Results received and not yet checked against the output: checked once the workers have
    /// their next tasks.
    var pendingChecks: [(task: PoolScheduler.TaskID, checksum: UInt64, worker: PoolScheduler.WorkerID)] = []
    /// Set once the scheduler said the pool started, or could not.
    var startOutcome: StartOutcome?

    enum StartOutcome {
        case started
        case failed(String)
    }
    var done = false

    init(pool: WorkerPool) {
        self.pool = pool
        scheduler = PoolScheduler(settings: pool.settings.scheduling)
        launcher = WorkerLauncher(
            executable: pool.settings.executable, pluginFolders: pool.settings.pluginFolders,
            environment: pool.settings.environment)
    }

    mutating func run(started: StartSignal) {
        perform(scheduler.start(at: .now))
        var reported = false
        while !done {
            let (images, events, shuttingDown, stoppedBySignal) = pool.inbox.withLock { inbox in
                defer {
                    inbox.images.removeAll()
                    inbox.events.removeAll()
                }
                return (inbox.images, inbox.events, inbox.shuttingDown, inbox.stoppedBySignal)
            }
            if !reported {
                if startOutcome == nil, let signalNumber = stoppedBySignal {
                    startOutcome = .failed("stopped by signal \(signalNumber) while the workers started")
                }
                if let outcome = startOutcome {
                    reported = true
                    if case .failed(let problem) = outcome {
                        launcher.stop(Array(slots.values))
                        started.problem.withLock { $0 = problem }
                        started.semaphore.signal()
                        return
                    }
                    started.semaphore.signal()
                }
            }
            for (id, image, request) in images {
                requests[id] = request
                handle(.imageQueued(id, image))
            }
            for event in events { handle(event) }
            if shuttingDown {
                handle(.shutdown)
                if !reported {
                    // Shut down while the workers started: a wait for them ends too.
                    started.problem.withLock { $0 = "the pool was shut down while its workers started" }
                    started.semaphore.signal()
                }
                return
            }
            handle(.tick)
            waitForInput()
            publishWorkers()
        }
    }

    mutating func handle(_ event: PoolScheduler.Event) {
        perform(scheduler.handle(event, at: .now))
    }

    /// Does each action in order; what an action reports back is handled before the next.
    mutating func perform(_ actions: [PoolScheduler.Action]) {
        for action in actions {
            switch action {
            case .startWorker(let id):
                do throws(SystemCallError) {
                    let slot = try launcher.start(workerID: id)
                    slots[id] = slot
                    handle(.workerSpawned(id, pid: slot.pid))
                } catch {
                    handle(.workerSpawnFailed(id, launcher.spawnFailure(error)))
                }
            case .send(let task, let worker):
                guard let request = requests[task.image] else { continue }
                switch request.work {
                case .tiles(let tiles):
                    send(.task(TaskMessage(
                        taskID: task.task, imageID: task.image, attempt: task.attempt, tile: task.tile, image: tiles.image,
                        filters: tiles.filters, edge: tiles.edge, colour: tiles.colour, regions: tiles.regions,
                        pixels: .shared(source: tiles.source, output: tiles.outputRegion, background: tiles.background))),
                        to: worker)
                case .image(var image):
                    (image.taskID, image.imageID, image.attempt) = (task.task, task.image, task.attempt)
                    send(.imageTask(image), to: worker)
                case .detection(var detection):
                    (detection.taskID, detection.imageID, detection.attempt) = (task.task, task.image, task.attempt)
                    send(.detectionTask(detection), to: worker)
                }
            case .cancel(let task, let worker):
                send(.cancel(taskID: task), to: worker)
            case .kill(let id, _):
                guard let slot = slots.removeValue(forKey: id) else { continue }
                handle(.workerExited(id, exit: launcher.kill(slot)))
            case .progress(let image, let done, let total):
                requests[image]?.progress?(done, total)
            case .finish(let image, let result):
                requests.removeValue(forKey: image)?.finish(result)
            case .started:
                if startOutcome == nil { startOutcome = .started }
            case .startFailed(let problem):
                if startOutcome == nil { startOutcome = .failed(problem) }
            case .stopWorkers:
                launcher.stop(Array(slots.values))
                slots.removeAll()
                done = true
            case .notice(let notice):
                log(notice)
                pool.onNotice(notice)
            }
        }
    }

    /// Writes `message` to the worker; a broken pipe fails the worker.
    mutating func send(_ message: WireMessage, to worker: PoolScheduler.WorkerID) {
        guard let slot = slots[worker] else { return }
        do {
            try Syscalls.writeAll(slot.input, try FrameEncoder.encode(message))
        } catch {
            handle(.workerFailed(worker, reason: "could not be sent '\(message.type)': \(error)"))
        }
    }

    /// Waits up to 100 ms for the workers' output or the wake pipe, and handles what came.
    mutating func waitForInput() {
        let watched = slots.map { ($0.key, $0.value.output) }
        // A poll that fails (no memory for its table) is a wait that saw nothing: the loop asks again.
        let ready = (try? Syscalls.pollReadable([pool.wakePipe.read] + watched.map(\.1), milliseconds: 100)) ?? []
        if ready.contains(0) { Syscalls.drain(pool.wakePipe.read) }
        for index in ready where index > 0 {
            let (id, fd) = watched[index - 1]
            guard slots[id] != nil else { continue }  // killed meanwhile
            switch Syscalls.readAvailable(fd) {
            case .wouldBlock: continue
            case .failed(let reason): handle(.workerFailed(id, reason: reason))
            case .bytes(let bytes):
                slots[id]!.decoder.append(bytes[...])
                handleMessages(from: id)
            }
        }
        checkResults()
    }

    /// Checks every result received against the output it wrote: a mismatch is a failed
    /// attempt, retried on another worker.
    mutating func checkResults() {
        let checks = pendingChecks
        pendingChecks.removeAll()
        for (task, checksum, worker) in checks {
            let computed = requestOf(task: task).map { PixelChecksum.of($0.output, in: $0.tile) }
            let mismatch = computed == checksum
                ? nil : "worker \(worker) sent \(checksum), the output holds \(computed.map(String.init) ?? "nothing")"
            handle(.verified(task, checksumMismatch: mismatch))
        }
    }

    /// Handles every whole message worker `id` has sent.
    mutating func handleMessages(from id: PoolScheduler.WorkerID) {
        while slots[id] != nil {
            let message: WireMessage
            do {
                guard let next = try slots[id]!.decoder.nextMessage() else { return }
                message = next
            } catch {
                return handle(.workerFailed(id, reason: "sent what does not decode: \(error)"))
            }
            switch message {
            case .hello(let hello):
                guard hello.workerID == id, hello.protocolVersion == WireProtocol.version else {
                    return handle(.workerFailed(id, reason: "sent an unexpected hello"))
                }
                handle(.hello(id))
            case .ready: handle(.ready(id))
            case .heartbeat: handle(.heartbeat(id))
            case .result(let result):
                guard answers(result.taskID, message) else { return handle(.workerFailed(id, reason: mismatch(message))) }
                handle(.result(id, result.taskID))
                pendingChecks.append((result.taskID, result.checksum, id))
            case .imageResult(let result):
                guard answers(result.taskID, message) else { return handle(.workerFailed(id, reason: mismatch(message))) }
                // Checked already: the frame's checksum covers the bytes, and the worker checked
                // what `verify: decode` asks. Kept for the caller before the image finishes.
                handle(.result(id, result.taskID))
                if let sent = scheduler.unverified[result.taskID] { requests[sent.image]?.imageResult = result }
                handle(.verified(result.taskID, checksumMismatch: nil))
            case .detectionResult(let result):
                guard answers(result.taskID, message) else { return handle(.workerFailed(id, reason: mismatch(message))) }
                // A photo's boxes, or why not: an answer, checked as it was read.
                handle(.result(id, result.taskID))
                if let sent = scheduler.unverified[result.taskID] { requests[sent.image]?.detectionResult = result }
                handle(.verified(result.taskID, checksumMismatch: nil))
            case .failure(let failure): handle(.failure(id, failure.taskID, message: failure.message))
            case .task, .imageTask, .detectionTask, .shutdown, .cancel:
                return handle(.workerFailed(id, reason: "sent '\(message.type)', which only a coordinator sends"))
            }
        }
    }

    /// Whether `answer` is the kind of answer task `taskID` asks for (a tile's `result`, a
    /// whole image's `imageResult`, a search's `detectionResult`); true for a task the pool no
    /// longer knows (a cancelled task's late answer: the scheduler drops it).
    func answers(_ taskID: PoolScheduler.TaskID, _ answer: WireMessage) -> Bool {
        guard let sent = scheduler.unverified[taskID] ?? scheduler.tasks[taskID], let work = requests[sent.image]?.work else {
            return true
        }
        switch (work, answer) {
        case (.tiles, .result), (.image, .imageResult), (.detection, .detectionResult): return true
        default: return false
        }
    }

    /// Why a worker that answered a task with another kind of answer is dropped.
    func mismatch(_ answer: WireMessage) -> String { "answered a task with '\(answer.type)', which that task does not take" }

    /// The output and tile of a task in flight.
    func requestOf(task: PoolScheduler.TaskID) -> (output: AnyPixels, tile: Rect)? {
        guard let sent = scheduler.unverified[task] ?? scheduler.tasks[task], let tiles = requests[sent.image]?.tiles
        else { return nil }
        return (tiles.output, sent.pending.tile)
    }

    func log(_ notice: PoolScheduler.PoolNotice) {
        switch notice {
        case .workerStarted(let id, let pid): logger.debug("worker \(id) started (pid \(pid))")
        case .workerLost(let id, let pid, let reason, let exit):
            logger.notice("worker \(id) (pid \(pid)) \(reason) (\(exit)); a replacement is started")
        case .tileRetried(let image, let tile, let attempt, let reason):
            logger.info("image \(image): tile \(tile) attempt \(attempt) failed: \(reason); retried")
        case .workersCannotStart(let problem): logger.warning("\(problem); trying again after a backoff")
        case .workerStartRetried(let worker, let target, let attempt, let attempts, let backoff, let problem):
            let next = "trying again in \(backoff.milliseconds) ms (try \(attempt) of \(attempts))"
            logger.info("cannot start worker \(worker) of \(target): \(problem); \(next)")
        case .workerTargetLowered(let count, let reason): logger.warning("\(reason); going on with \(count) workers")
        }
    }

    /// The workers as the scheduler sees them, for ``WorkerPool/workers``.
    func publishWorkers() {
        let statuses = scheduler.workers.values.sorted { $0.id < $1.id }.map { worker -> WorkerStatus in
            let (state, tile): (WorkerStatus.State, Rect?) =
                switch worker.state {
                case .starting: (.starting, nil)
                case .idle: (.idle, nil)
                case .busy(let task, _): (.busy, scheduler.tasks[task]?.pending.tile)
                case .stopping: (.stopping, nil)
                }
            return WorkerStatus(id: worker.id, pid: worker.pid, state: state, tile: tile, tilesDone: worker.tilesDone)
        }
        pool.snapshot.withLock { $0 = statuses }
    }
}
