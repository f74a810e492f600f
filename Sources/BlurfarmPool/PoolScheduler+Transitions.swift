import BlurfarmCore
import BlurfarmEngine

extension PoolScheduler {
    /// The actions that start the pool: one ``Action/startWorker(_:)`` per worker.
    public mutating func start(at now: Instant) -> [Action] {
        var actions: [Action] = []
        startMissingWorkers(at: now, into: &actions)
        return actions
    }

    /// Takes `event`, which happened at `now`, and returns what to do, in order.
    public mutating func handle(_ event: Event, at now: Instant) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .workerSpawned(let id, let pid):
            workers[id]?.pid = pid
            actions.append(.notice(.workerStarted(id, pid: pid)))
        case .workerSpawnFailed(let id, let problem):
            spawnFailed(id, problem, at: now, into: &actions)
        case .hello(let id):
            guard let worker = workers[id], !worker.greeted, case .starting = worker.state else {
                kill(id, "sent an unexpected hello", into: &actions)
                return actions
            }
            workers[id]!.greeted = true
            workers[id]!.lastHeard = now
            startFailures = 0
            outage = nil
        case .ready(let id):
            guard let worker = workers[id], worker.greeted else {
                kill(id, "said ready before hello", into: &actions)
                return actions
            }
            workers[id]!.lastHeard = now
            switch worker.state {
            case .busy(let task, _):
                if let sent = tasks.removeValue(forKey: task) {
                    settle(sent)
                    // Ready with no reply to a task still wanted: the attempt is lost.
                    if !sent.cancelled { failedAttempt(sent, "worker \(id) answered nothing", avoid: id, into: &actions) }
                    finishIfDone(sent.image, into: &actions)
                }
            case .starting: break
            case .idle, .stopping: return actions
            }
            if !worker.waiting.isEmpty {
                // The next task it holds runs from now.
                let next = workers[id]!.waiting.removeFirst()
                workers[id]!.state = .busy(task: next, since: now)
                break
            }
            workers[id]!.state = .idle
            if !hasStarted, workers.count == workerTarget, workers.values.allSatisfy({ $0.state == .idle }) {
                hasStarted = true
                actions.append(.started)
            }
        case .heartbeat(let id):
            workers[id]?.lastHeard = now
        case .result(let id, let task):
            workers[id]?.lastHeard = now
            if let sent = answer(task, from: id, at: now, settling: false) { unverified[task] = sent }
        case .verified(let task, let mismatch):
            guard let sent = unverified.removeValue(forKey: task) else { break }
            settle(sent)
            if sent.cancelled || images[sent.image]?.ending != nil {
                // Dropped: the image failed or was cancelled meanwhile.
            } else if let mismatch {
                failedAttempt(sent, "checksum mismatch: \(mismatch)", avoid: sent.worker, into: &actions)
            } else {
                images[sent.image]!.done += 1
                let image = images[sent.image]!
                actions.append(.progress(sent.image, done: image.done, total: image.total))
            }
            finishIfDone(sent.image, into: &actions)
        case .failure(let id, let task, let message):
            workers[id]?.lastHeard = now
            guard let sent = answer(task, from: id, at: now) else { break }
            if sent.cancelled {
                // A cancelled task's reply, sent before the cancel came: its image may be done.
                finishIfDone(sent.image, into: &actions)
            } else {
                end(sent.image, RenderFailure(.filter(tile: sent.pending.tile, worker: id, message: message)), into: &actions)
            }
        case .workerFailed(let id, let reason):
            kill(id, reason, into: &actions)
            return actions
        case .workerExited(let id, let exit):
            guard let worker = workers.removeValue(forKey: id) else { break }
            actions.append(.notice(.workerLost(id, pid: worker.pid, reason: worker.stopReason ?? "exited", exit: exit)))
            if !worker.greeted { noteStartFailure("worker \(id) (pid \(worker.pid)) \(exit)", at: now, into: &actions) }
            // Its first task was running (tasks run in the order sent); the others never ran.
            for (position, task) in tasks.filter({ $0.value.worker == id }).keys.sorted().enumerated() {
                let sent = tasks.removeValue(forKey: task)!
                settle(sent)
                if !sent.cancelled, position == 0 {
                    let lost = "worker \(id) (pid \(worker.pid)) \(worker.stopReason ?? "exited") (\(exit))"
                    failedAttempt(sent, lost, avoid: nil, into: &actions)
                } else if !sent.cancelled {
                    requeue(sent)
                }
                finishIfDone(sent.image, into: &actions)
            }
            if isShuttingDown { break }
            startMissingWorkers(at: now, into: &actions)
        case .imageQueued(let id, let image):
            let pending = zip(image.tiles, image.pixelsRead).map { Pending(tile: $0, attempt: 1, pixelsRead: $1) }
            images[id] = ImageState(order: image.order, plugins: image.plugins, total: pending.count, queue: pending)
            if isShuttingDown {
                end(id, RenderFailure(.poolShutDown), into: &actions)
            } else if let outage, !workers.values.contains(where: \.greeted) {
                end(id, RenderFailure(.workersUnavailable(outage.problem)), into: &actions)
            }
            finishIfDone(id, into: &actions)
        case .jobCancelled(let job):
            for (id, image) in images where image.order.job == job && image.ending == nil {
                end(id, RenderFailure(.cancelled), into: &actions)
            }
        case .jobReprioritised(let job, let priority):
            for id in images.keys where images[id]!.order.job == job { images[id]!.order.priority = priority }
        case .tick:
            checkTimeouts(at: now, into: &actions)
            startMissingWorkers(at: now, into: &actions)
        case .shutdown:
            isShuttingDown = true
            for id in images.keys where images[id]!.ending == nil { end(id, RenderFailure(.poolShutDown), into: &actions) }
            // A worker that has not said hello holds nothing: killed at once, not waited for
            // while it starts (a pool shut down as it starts: an image refused from its header).
            for id in workers.keys.sorted() where !workers[id]!.greeted {
                kill(id, "was stopped before it started", into: &actions)
            }
            // The workers stop before any image is given back: none writes into its pixels after.
            actions.append(.stopWorkers)
            for id in Array(images.keys) {
                images[id]!.inFlight = 0
                finishIfDone(id, into: &actions)
            }
            workers.removeAll()
            tasks.removeAll()
            unverified.removeAll()
            return actions
        }
        dispatch(at: now, into: &actions)
        return actions
    }

    /// The task answered by worker `id`, removed from those in flight; nil for a task it was
    /// not running (a cancelled task's late reply).
    private mutating func answer(_ task: TaskID, from id: WorkerID, at now: Instant, settling: Bool = true) -> Sent? {
        guard case .busy(let running, let since) = workers[id]?.state, running == task,
            let sent = tasks.removeValue(forKey: task)
        else { return nil }
        slowestTask = max(slowestTask, since.duration(to: now))
        workers[id]!.tilesDone += 1
        if settling { settle(sent) }
        return sent
    }

    /// One task fewer in flight for its image.
    private mutating func settle(_ sent: Sent) {
        images[sent.image]?.inFlight -= 1
    }

    /// Marks worker `id` to be killed, with its reason; its task, if any, stays in flight until
    /// the shell reports the worker gone.
    mutating func kill(_ id: WorkerID, _ reason: String, into actions: inout [Action]) {
        guard workers[id] != nil, workers[id]!.state != .stopping else { return }
        workers[id]!.state = .stopping
        workers[id]!.stopReason = reason
        actions.append(.kill(id, reason: reason))
    }
}
