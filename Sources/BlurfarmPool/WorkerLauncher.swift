import BlurfarmSystem
import BlurfarmWire

/// Starts, kills and stops `blurfarm-worker` processes for the pool's thread (which must be
/// the one calling: the workers die with the thread that started them).
final class WorkerLauncher {
    let executable: String
    let pluginFolders: [String]
    /// The workers' environment: the caller's, with `SWIFT_BACKTRACE=enable=no` unless it sets
    /// `SWIFT_BACKTRACE` (a worker that crashes, a plugin's fault, is reported in one line by
    /// the coordinator, not by pages of backtrace on the shared standard error).
    let environment: Syscalls.CStrings

    init(executable: String, pluginFolders: [String], environment: [String]) {
        self.executable = executable
        self.pluginFolders = pluginFolders
        let backtrace = environment.contains { $0.hasPrefix("SWIFT_BACKTRACE=") } ? [] : ["SWIFT_BACKTRACE=enable=no"]
        self.environment = Syscalls.CStrings(environment + backtrace)
    }

    /// Starts worker `workerID` (`blurfarm-worker --worker-id N --coordinator-pid P`), its
    /// standard input and output on new pipes.
    func start(workerID: UInt32) throws(SystemCallError) -> PoolSupervisor.Slot {
        let toChild = try Syscalls.pipe()
        let fromChild: (read: Int32, write: Int32)
        do throws(SystemCallError) {
            fromChild = try Syscalls.pipe()
        } catch {
            Syscalls.close(toChild.read)
            Syscalls.close(toChild.write)
            throw error
        }
        let arguments = [
            executable, "--worker-id", "\(workerID)", "--coordinator-pid", "\(Syscalls.processID)",
        ] + pluginFolders.flatMap { ["--plugin-folder", $0] }
        let spawned = Result { () throws(SystemCallError) -> Int32 in
            try Syscalls.spawn(
                executable, arguments: arguments, environment: environment, stdin: toChild.read, stdout: fromChild.write)
        }
        Syscalls.close(toChild.read)
        Syscalls.close(fromChild.write)
        switch spawned {
        case .success(let pid):
            // Read without blocking: a descriptor number poll reported may belong to a replacement.
            Syscalls.setNonBlocking(fromChild.read)
            return PoolSupervisor.Slot(pid: pid, input: toChild.write, output: fromChild.read)
        case .failure(let error):
            Syscalls.close(toChild.write)
            Syscalls.close(fromChild.read)
            throw error
        }
    }

    /// What `error` from ``start(workerID:)`` says: the executable cannot be run (`posix_spawn`
    /// found no program there, or may not run it), or the machine was short of something.
    func spawnFailure(_ error: SystemCallError) -> PoolScheduler.SpawnFailure {
        error.isAboutTheProgram ? .executable("\(executable): \(error.reason)") : .shortOf("\(error)")
    }

    /// Kills the worker (SIGKILL), closes its pipes and waits for it: how it ended.
    func kill(_ slot: PoolSupervisor.Slot) -> String {
        Syscalls.kill(slot.pid)
        Syscalls.close(slot.input)
        Syscalls.close(slot.output)
        return Syscalls.describe(status: Syscalls.wait(slot.pid))
    }

    /// Sends `shutdown` to every worker and waits for each to end, then reaps it; a worker still
    /// running after 2 s is killed. A worker's end is its output pipe's: an exiting process
    /// closes its descriptors once its memory is gone, so the wait wakes when it happens (a
    /// wait that looked every 5 ms lost up to 5 ms at the end of every run). A pipe that
    /// another process still holds (a plugin's child) does not keep the wait past the worker's
    /// end: the ended workers are looked for every 100 ms as well.
    func stop(_ slots: [PoolSupervisor.Slot]) {
        for slot in slots {
            if let frame = try? FrameEncoder.encode(.shutdown) { try? Syscalls.writeAll(slot.input, frame) }
            Syscalls.close(slot.input)
        }
        let deadline = ContinuousClock.now + .seconds(2)
        var open = slots
        while !open.isEmpty {
            let left = (deadline - ContinuousClock.now).milliseconds
            guard left > 0, let ready = try? Syscalls.pollReadable(open.map(\.output), milliseconds: Int32(min(left, 100)))
            else { break }
            // What a worker still says is dropped; the pipe's end is the worker's (or it ended).
            for index in open.indices.reversed()
            where ready.contains(index) && Self.reachedEnd(open[index].output) || Syscalls.hasExited(open[index].pid) {
                Syscalls.close(open.remove(at: index).output)
            }
        }
        for slot in open { Syscalls.close(slot.output) }
        // Each a moment from its end (or reaped above); after the deadline, killed.
        for slot in slots { _ = Syscalls.endStatus(slot.pid, killedAfter: deadline) }
    }

    /// Reads what the non-blocking `fd` holds, at most 16 reads (a worker that keeps writing
    /// does not hold the wait past its deadline): whether its writers are gone (or it failed).
    private static func reachedEnd(_ fd: Int32) -> Bool {
        for _ in 0..<16 {
            switch Syscalls.readAvailable(fd) {
            case .bytes: continue
            case .wouldBlock: return false
            case .failed: return true
            }
        }
        return false
    }
}
