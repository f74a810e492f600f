import BlurfarmCore
import BlurfarmEngine

extension PoolScheduler {
    /// Adds ``Action/startWorker(_:)`` for each worker missing from the target, unless a spawn
    /// or an outage waits for its backoff (then one at a time once it is over).
    mutating func startMissingWorkers(at now: Instant, into actions: inout [Action]) {
        guard !isShuttingDown else { return }
        if let outage, now < outage.retryAt { return }
        if let retry = spawnRetry, now < retry.next { return }
        while workers.count < workerTarget {
            let id = nextWorkerID
            nextWorkerID += 1
            workers[id] = Worker(id: id, state: .starting(since: now), lastHeard: now)
            actions.append(.startWorker(id))
            if spawnRetry != nil { return }
        }
    }

    /// How to mend a worker executable that cannot be run: where blurfarm looks for it, and
    /// the ways around it (docs/commands.md, "Installing").
    public static let missingWorkerAdvice =
        "; blurfarm runs blurfarm-worker from beside its own executable, else from ../libexec/blurfarm/ "
        + "(scripts/install.sh installs both executables), or the one $BLURFARM_WORKER names; "
        + "--workers 0 renders in this process without it"

    /// Worker `id` could not be spawned: when the machine was short of something, tried again
    /// after a backoff; after ``Settings/startAttempts`` such tries, or at once when the worker
    /// executable cannot be run, the pool fails to start, goes on with the workers it has, or
    /// (with none) begins an outage.
    mutating func spawnFailed(_ id: WorkerID, _ failure: SpawnFailure, at now: Instant, into actions: inout [Action]) {
        workers[id] = nil
        let message: String
        switch failure {
        case .shortOf(let problem):
            let attempts = (spawnRetry?.attempts ?? 0) + 1
            guard attempts >= settings.startAttempts else {
                let backoff = Duration.milliseconds(100) * (1 << (attempts - 1))
                spawnRetry = (attempts, now + backoff, problem)
                actions.append(.notice(.workerStartRetried(
                    worker: workers.count + 1, workers: workerTarget, attempt: attempts, attempts: settings.startAttempts,
                    backoff: backoff, problem: problem)))
                return
            }
            message = "cannot start worker \(workers.count + 1) of \(workerTarget): \(problem) "
                + "(tried \(attempts) times); lower --workers or raise the limit"
        case .executable(let problem):
            message = "cannot start the workers: the worker executable \(problem)" + Self.missingWorkerAdvice
        }
        spawnRetry = nil
        if !hasStarted {
            actions.append(.startFailed(message))
        } else if workers.isEmpty {
            beginOutage(message, at: now, into: &actions)
        } else {
            workerTarget = workers.count
            actions.append(.notice(.workerTargetLowered(to: workerTarget, reason: message)))
        }
    }

    /// A worker died before its `hello`; too many in a row fail the start or begin an outage.
    mutating func noteStartFailure(_ message: String, at now: Instant, into actions: inout [Action]) {
        startFailures += 1
        guard startFailures > 3 * workerTarget else { return }
        startFailures = 0
        let problem = "the workers keep failing to start: \(message)"
        if hasStarted {
            beginOutage(problem, at: now, into: &actions)
        } else {
            actions.append(.startFailed(problem))
        }
    }

    /// No worker can start: the images fail while none is alive, and the workers are started
    /// again after a backoff (1 s, doubling up to 30 s).
    mutating func beginOutage(_ problem: String, at now: Instant, into actions: inout [Action]) {
        let backoff = outage.map { min($0.backoff * 2, .seconds(30)) } ?? .seconds(1)
        outage = (problem, now + backoff, backoff)
        actions.append(.notice(.workersCannotStart(problem)))
        guard !workers.values.contains(where: \.greeted) else { return }
        for id in images.keys where images[id]!.ending == nil {
            end(id, RenderFailure(.workersUnavailable(problem)), into: &actions)
        }
    }

    /// A task that never ran (it waited in a worker that is gone): back to the front of its
    /// image's queue with the same attempt number.
    mutating func requeue(_ sent: Sent) {
        guard images[sent.image]?.ending == nil else { return }
        images[sent.image]!.queue.insert(sent.pending, at: 0)
    }

    /// A failed attempt at a tile: back to the front of its image's queue with the next attempt
    /// number, or the image fails when the attempts are used up.
    mutating func failedAttempt(_ sent: Sent, _ reason: String, avoid: WorkerID?, into actions: inout [Action]) {
        guard let image = images[sent.image], image.ending == nil else { return }
        let pending = sent.pending
        if Int(pending.attempt) > settings.retries {
            let failure = RenderFailure(
                .tileFailed(tile: pending.tile, attempts: pending.attempt, plugins: image.plugins, last: reason))
            end(sent.image, failure, into: &actions)
        } else {
            images[sent.image]!.retries += 1
            images[sent.image]!.queue.insert(
                Pending(tile: pending.tile, attempt: pending.attempt + 1, pixelsRead: pending.pixelsRead, avoid: avoid),
                at: 0)
            actions.append(.notice(.tileRetried(sent.image, tile: pending.tile, attempt: pending.attempt, reason: reason)))
        }
    }

    /// The image fails (or is cancelled) with `failure`: its queue is dropped; it finishes
    /// once its tasks in flight are answered. Those of a cancelled image, and those waiting in
    /// a worker, are cancelled (the workers drop them and go on); the workers still rendering a
    /// failed image are killed and replaced, so that it fails at once.
    mutating func end(_ id: ImageID, _ failure: RenderFailure, into actions: inout [Action]) {
        guard let image = images[id], image.ending == nil else { return }
        images[id]!.ending = RenderFailure(failure.reason, retries: image.retries)
        images[id]!.queue.removeAll()
        for (task, sent) in tasks.sorted(by: { $0.key < $1.key }) where sent.image == id && !sent.cancelled {
            tasks[task]!.cancelled = true
            guard let worker = workers[sent.worker], worker.state != .stopping else { continue }
            if failure.reason == .cancelled || worker.waiting.contains(task) {
                actions.append(.cancel(task, on: sent.worker))
            } else {
                kill(sent.worker, "was stopped: the image of its task failed", into: &actions)
            }
        }
        finishIfDone(id, into: &actions)
    }

    /// Finishes the image when nothing of it is in flight and it failed or every tile is done.
    mutating func finishIfDone(_ id: ImageID, into actions: inout [Action]) {
        guard let image = images[id], image.inFlight == 0 else { return }
        if let ending = image.ending {
            images[id] = nil
            actions.append(.finish(id, .failure(ending)))
        } else if image.done == image.total {
            images[id] = nil
            actions.append(.finish(id, .success(image.retries)))
        }
    }

    /// Sends queued tiles to workers with room while both remain: every idle worker one before
    /// any busy worker its next (up to ``Settings/tasksHeld``); the first image in
    /// ``ImageOrder`` first, and a tile not to the worker it avoids unless that is the only one.
    mutating func dispatch(at now: Instant, into actions: inout [Action]) {
        guard !isShuttingDown else { return }
        for held in 0..<settings.tasksHeld {
            let takers = workers.values.filter { $0.held == held }.map(\.id).sorted()
            guard !takers.isEmpty else { continue }
            let order = images.filter { !$0.value.queue.isEmpty }.sorted { $0.value.order < $1.value.order }.map(\.key)
            guard !order.isEmpty else { return }
            for worker in takers {
                var chosen: (image: ImageID, position: Int)?
                for id in order {
                    if let position = images[id]!.queue.firstIndex(where: { $0.avoid != worker || workerTarget == 1 }) {
                        chosen = (id, position)
                        break
                    }
                }
                guard let (id, position) = chosen else { continue }
                let pending = images[id]!.queue.remove(at: position)
                let task = nextTaskID
                nextTaskID += 1
                tasks[task] = Sent(image: id, pending: pending, worker: worker)
                images[id]!.inFlight += 1
                if held == 0 {
                    workers[worker]!.state = .busy(task: task, since: now)
                    workers[worker]!.lastHeard = now
                } else {
                    workers[worker]!.waiting.append(task)
                }
                actions.append(.send(TileTask(task: task, image: id, tile: pending.tile, attempt: pending.attempt), to: worker))
            }
        }
    }

    /// Kills workers with a task (or not yet greeted) silent longer than the heartbeat timeout,
    /// and workers that ran one task longer than the task timeout.
    mutating func checkTimeouts(at now: Instant, into actions: inout [Action]) {
        for id in workers.keys.sorted() {
            let worker = workers[id]!
            switch worker.state {
            case .idle, .stopping: continue
            case .starting, .busy:
                if worker.lastHeard.duration(to: now) > settings.heartbeatTimeout {
                    kill(id, "was silent for more than \(settings.heartbeatTimeout) and was killed", into: &actions)
                    continue
                }
            }
            if case .busy(let task, let since) = worker.state {
                // The pixels the task's filters read (answered or not): its timeout allows for them.
                let pixelsRead = (tasks[task] ?? unverified[task])?.pending.pixelsRead ?? 0
                let limit = settings.taskTimeout.limit(pixelsRead: pixelsRead, slowestSoFar: slowestTask)
                if since.duration(to: now) > limit {
                    kill(
                        id, "ran one task longer than the task timeout of \(settings.taskTimeout.describe(limit)) and was killed",
                        into: &actions)
                }
            }
        }
    }
}
