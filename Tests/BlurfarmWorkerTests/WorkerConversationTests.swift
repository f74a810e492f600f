import BlurfarmCore
import BlurfarmSharedMemory
import BlurfarmWire
import BlurfarmWorker
import BlurfarmTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The worker process's side of the protocol: handshake, heartbeats, failures, exits.
@Suite(.tags(.process), .blocking) struct WorkerConversationTests {
    /// A small inline task over a `size`×`size` RGB image.
    static func inlineTask(id: UInt64, filters: [FilterSpec], size: Int = 8) -> TaskMessage {
        let image = Rect(x: 0, y: 0, width: size, height: size)
        let source = PixelBuffer(rect: image, channels: 3)
        Pixels.randomize(source, seed: id)
        return TaskMessage(
            taskID: id, imageID: 1, attempt: 1, tile: image, image: image, filters: filters, edge: .clamp,
            colour: .gamma, pixels: .inline(source: InlinePixels(source)))
    }

    static let gaussian = [FilterSpec(name: "gaussian", arguments: ["sigma": .number(1)])]

    /// A task that runs long enough (a wide motion blur over 512 × 512 inline pixels) for
    /// frames sent meanwhile to arrive while it runs.
    /// A task of a second or more (six motion blurs of 801 samples over a megapixel) whose
    /// pixels are in shared memory, so that its frame, with a few small ones after it, fits in
    /// a pipe's buffer: sent while the worker is stopped
    /// (``WorkerProcessHandle/whileStopped(_:)``), they all arrive at once, while it runs.
    struct SlowTask {
        let message: TaskMessage
        /// Holds the pixels for as long as the task may run.
        let segment: SharedSegment

        init(id: UInt64) throws {
            let image = Rect(x: 0, y: 0, width: 1024, height: 1024)
            segment = try SharedSegment.create(byteCount: image.area * 4 * 4 * 2)
            let source = PixelBuffer(rect: image, storage: segment.storage, channels: 4)
            Pixels.randomize(source, seed: id)
            let motion = ("motion", ["radius": ParameterValue.number(120), "angle": .number(10), "samples": .integer(400)])
            let sourceRegion = SharedRegion(segment: segment.id, file: segment.identity, byteOffset: 0, rect: image, channels: 4, rowStride: 4096)
            let outputRegion = SharedRegion(
                segment: segment.id, file: segment.identity, byteOffset: image.area * 16, rect: image, channels: 4, rowStride: 4096)
            message = TaskMessage(
                taskID: id, imageID: 1, attempt: 1, tile: image, image: image,
                filters: Chains.specs(Array(repeating: motion, count: 6)), edge: .clamp, colour: .gamma,
                pixels: .shared(source: sourceRegion, output: outputRegion))
        }
    }

    @Test func handshakeSaysHelloWithTheIDAndPidThenReady() throws {
        let worker = try WorkerProcessHandle(workerID: 4_000_000_001)
        let hello = try worker.handshake()
        #expect(hello == Hello(workerID: 4_000_000_001, protocolVersion: WireProtocol.version, pid: worker.process.processIdentifier))
        try worker.send(.shutdown)
        let exit = try worker.waitForExit()
        #expect(exit.status == 0 && exit.stderr.isEmpty)
        #expect(try worker.reader.next() == nil, "nothing after shutdown")
    }

    @Test func endOfInputExitsZero() throws {
        let worker = try WorkerProcessHandle(workerID: 1)
        _ = try worker.handshake()
        try worker.closeInput()
        let exit = try worker.waitForExit()
        #expect(exit.status == 0 && exit.stderr.isEmpty)
    }

    @Test func unknownFilterAndBadArgumentsFailTheTaskAndTheWorkerGoesOn() throws {
        let worker = try WorkerProcessHandle(workerID: 2)
        _ = try worker.handshake()
        try worker.send(.task(Self.inlineTask(id: 1, filters: [FilterSpec(name: "gausian", arguments: ["sigma": .number(2)])])))
        let failure = try #require(
            try worker.reader.nextSkippingHeartbeats()?.taskFailure, "no failure for an unknown filter")
        #expect(failure.taskID == 1)
        #expect(failure.message.contains("unknown filter 'gausian'") && failure.message.contains("gaussian"))
        #expect(try worker.reader.nextSkippingHeartbeats() == .ready)

        try worker.send(.task(Self.inlineTask(id: 2, filters: [FilterSpec(name: "gaussian", arguments: ["sigma": .number(-3)])])))
        let bad = try #require(try worker.reader.nextSkippingHeartbeats()?.taskFailure, "no failure for a negative sigma")
        #expect(bad.taskID == 2 && bad.message.contains("'sigma' must be"))
        #expect(try worker.reader.nextSkippingHeartbeats() == .ready)

        let good = Self.inlineTask(id: 3, filters: Self.gaussian)
        try worker.send(.task(good))
        let result = try #require(try worker.reader.nextSkippingHeartbeats()?.taskResult, "no result after the failures")
        #expect(result.taskID == 3 && result.output?.checksum == result.checksum)
        #expect(try worker.reader.nextSkippingHeartbeats() == .ready)
        try worker.send(.shutdown)
        #expect(try worker.waitForExit().status == 0)
    }

    @Test func aSegmentThatIsNotThereFailsTheTask() throws {
        let worker = try WorkerProcessHandle(workerID: 3)
        _ = try worker.handshake()
        let image = Rect(x: 0, y: 0, width: 4, height: 4)
        let region = SharedRegion(segment: 999_999, file: FileIdentity(device: 0, inode: 0), byteOffset: 0, rect: image, channels: 4, rowStride: 16)
        try worker.send(.task(TaskMessage(
            taskID: 9, imageID: 1, attempt: 1, tile: image, image: image, filters: Self.gaussian, edge: .clamp,
            colour: .gamma, pixels: .shared(source: region, output: region))))
        let failure = try #require(
            try worker.reader.nextSkippingHeartbeats()?.taskFailure, "no failure for a missing segment")
        #expect(failure.taskID == 9 && failure.message.contains("open /proc/\(getpid())/fd/999999"))
        #expect(try worker.reader.nextSkippingHeartbeats() == .ready)
        try worker.closeInput()
        #expect(try worker.waitForExit().status == 0)
    }

    /// A segment id whose descriptor is now another file than the one the task names (the
    /// coordinator's process closed the number and reused it): the worker refuses the task
    /// before it writes a byte, so no other file's bytes are rendered or written over.
    @Test func aSegmentIDThatNamesAnotherFileFailsTheTaskAndWritesNothing() throws {
        let worker = try WorkerProcessHandle(workerID: 5)
        _ = try worker.handshake()
        let image = Rect(x: 0, y: 0, width: 4, height: 4)
        let named = try SharedSegment.create(byteCount: image.area * 16 * 2)
        let other = try SharedSegment.create(byteCount: image.area * 16 * 2)
        Pixels.randomize(PixelBuffer(rect: image, storage: named.storage, channels: 4), seed: 5)
        let floats = image.area * 4 * 2
        func contents() -> [UInt32] { named.storage.withUnsafeFloats { p in (0..<floats).map { p[$0].bitPattern } } }
        let before = contents()
        func task(id: UInt64, file: FileIdentity) -> WireMessage {
            .task(TaskMessage(
                taskID: id, imageID: 1, attempt: 1, tile: image, image: image, filters: Self.gaussian, edge: .clamp,
                colour: .gamma,
                pixels: .shared(
                    source: SharedRegion(segment: named.id, file: file, byteOffset: 0, rect: image, channels: 4, rowStride: 16),
                    output: SharedRegion(
                        segment: named.id, file: file, byteOffset: image.area * 16, rect: image, channels: 4, rowStride: 16))))
        }
        try worker.send(task(id: 1, file: other.identity))
        let failure = try #require(
            try worker.reader.nextSkippingHeartbeats()?.taskFailure, "no failure for a segment id naming another file")
        #expect(failure.taskID == 1)
        #expect(
            failure.message
                == "source segment \(named.id): /proc/\(getpid())/fd/\(named.id) is the file device \(named.identity.device), "
                + "inode \(named.identity.inode), not the task's segment (device \(other.identity.device), inode \(other.identity.inode))")
        #expect(try worker.reader.nextSkippingHeartbeats() == .ready)
        #expect(contents() == before, "the worker wrote into a segment it refused")

        try worker.send(task(id: 2, file: named.identity))
        let result = try #require(try worker.reader.nextSkippingHeartbeats()?.taskResult, "no result for the right file")
        #expect(result.taskID == 2)
        #expect(contents() != before)
        #expect(try worker.reader.nextSkippingHeartbeats() == .ready)
        try worker.closeInput()
        #expect(try worker.waitForExit().status == 0)
    }

    @Test func garbageInputExitsWithOneLineAndStatus65() throws {
        let worker = try WorkerProcessHandle(workerID: 5)
        _ = try worker.handshake()
        try worker.sendBytes(Array("this is not a frame\n".utf8))
        let exit = try worker.waitForExit()
        #expect(exit.status == WorkerExit.badInputStatus)
        #expect(exit.stderr.split(separator: "\n").count == 1 && exit.stderr.contains("bad magic"), "\(exit.stderr)")
    }

    @Test func aFrameCutOffByTheEndOfInputIsBadInput() throws {
        let worker = try WorkerProcessHandle(workerID: 6)
        _ = try worker.handshake()
        let frame = try FrameEncoder.encode(.task(Self.inlineTask(id: 1, filters: Self.gaussian)))
        try worker.sendBytes(Array(frame.prefix(frame.count - 5)))
        try worker.closeInput()
        let exit = try worker.waitForExit()
        #expect(exit.status == WorkerExit.badInputStatus)
        #expect(exit.stderr.split(separator: "\n").count == 1 && exit.stderr.contains("ends inside a frame"))
    }

    @Test func aCoordinatorThatIsNotTheParentMakesTheWorkerExitAtOnce() throws {
        let worker = try WorkerProcessHandle(workerID: 7, coordinatorPID: 1)
        let exit = try worker.waitForExit()
        #expect(exit.status == WorkerExit.coordinatorGoneStatus && exit.stderr.contains("gone"))
        #expect(try worker.reader.next() == nil, "no hello from a worker whose coordinator is gone")
    }

    /// A task of a few seconds (``SlowTask``): heartbeats naming it arrive between the task and
    /// its result, every half second as a rule, and none after the result.
    @Test func heartbeatsArriveWhileALongTaskRuns() throws {
        let task = try SlowTask(id: 77)
        defer { withExtendedLifetime(task) {} }
        let worker = try WorkerProcessHandle(workerID: 8)
        _ = try worker.handshake()
        let start = Date()
        try worker.send(.task(task.message))
        var arrivals: [Double] = [0]
        var heartbeats = 0
        var elapsed = 0.0
        loop: while true {
            let message = try worker.reader.next(timeout: 120)
            arrivals.append(Date().timeIntervalSince(start))
            switch message {
            case .heartbeat(let taskID):
                #expect(taskID == 77)
                heartbeats += 1
            case .result(let result):
                #expect(result.taskID == 77)
                elapsed = Double(result.elapsedNanoseconds) / 1e9
                break loop
            default:
                Issue.record("unexpected \(String(describing: message))")
                return
            }
        }
        #expect(try worker.reader.next() == .ready)
        #expect(elapsed > 1.5, "the task took \(elapsed) s: too short to show heartbeats")
        #expect(heartbeats >= 2)
        // Every half second, as a rule (the median gap); never near the coordinator's 10 s
        // heartbeat timeout, even when a loaded machine holds the worker back for a while.
        let gaps = zip(arrivals.dropFirst(), arrivals).map { $0 - $1 }
        #expect(gaps.sorted()[gaps.count / 2] < 0.75, "gaps between frames: \(gaps)")
        #expect(gaps.allSatisfy { $0 < 5 }, "gaps between frames: \(gaps)")
        try worker.send(.shutdown)
        #expect(try worker.waitForExit().status == 0)
        #expect(try worker.reader.next() == nil, "no heartbeat after the result")
    }

    /// A cancelled task sends no result, only `ready`; a cancel of another task changes nothing.
    @Test func aCancelledTaskSendsNoResult() throws {
        let slow = try SlowTask(id: 50)
        defer { withExtendedLifetime(slow) {} }
        let worker = try WorkerProcessHandle(workerID: 10)
        _ = try worker.handshake()
        // All three arrive at once, while the task runs however slow this machine is.
        try worker.whileStopped {
            try worker.send(.task(slow.message))
            try worker.send(.cancel(taskID: 49))
            try worker.send(.cancel(taskID: 50))
        }
        #expect(try worker.reader.nextSkippingHeartbeats() == .ready, "no result for the cancelled task")
        let next = Self.inlineTask(id: 51, filters: Self.gaussian)
        try worker.send(.task(next))
        let result = try #require(
            try worker.reader.nextSkippingHeartbeats()?.taskResult, "no result for the task after the cancelled one")
        #expect(result.taskID == 51)
        try worker.send(.cancel(taskID: 51))  // done already: ignored, no reply
        #expect(try worker.reader.nextSkippingHeartbeats() == .ready)
        try worker.send(.shutdown)
        #expect(try worker.waitForExit().status == 0)
        #expect(try worker.reader.next() == nil)
    }

    /// A worker holds two tasks: the second, sent while the first runs, runs after it (a task
    /// sent after the first's `ready` runs after the second); a cancel of the waiting one drops
    /// it (only `ready`); a third task while two are held is bad input.
    @Test func aWorkerHoldsTwoTasksRunsThemInOrderAndDropsAWaitingOneCancelled() throws {
        let slow = try SlowTask(id: 60), running = try SlowTask(id: 70)
        defer { withExtendedLifetime((slow, running)) {} }
        let worker = try WorkerProcessHandle(workerID: 12)
        _ = try worker.handshake()
        try worker.whileStopped {
            try worker.send(.task(slow.message))
            try worker.send(.task(Self.inlineTask(id: 61, filters: Self.gaussian)))
            try worker.send(.cancel(taskID: 61))
        }
        let first = try #require(try worker.reader.nextSkippingHeartbeats()?.taskResult, "no result for the running task")
        #expect(first.taskID == 60)
        #expect(try worker.reader.nextSkippingHeartbeats() == .ready)
        try worker.send(.task(Self.inlineTask(id: 62, filters: Self.gaussian)))
        #expect(try worker.reader.nextSkippingHeartbeats() == .ready, "the cancelled waiting task: no result")
        let third = try #require(
            try worker.reader.nextSkippingHeartbeats()?.taskResult, "no result for the task after the cancelled one")
        #expect(third.taskID == 62)
        #expect(try worker.reader.nextSkippingHeartbeats() == .ready)

        // Three at once: the third is refused, and the worker exits.
        try worker.whileStopped {
            try worker.send(.task(running.message))
            try worker.send(.task(Self.inlineTask(id: 71, filters: Self.gaussian)))
            try worker.send(.task(Self.inlineTask(id: 72, filters: Self.gaussian)))
        }
        let exit = try worker.waitForExit(timeout: 60)
        #expect(exit.status == WorkerExit.badInputStatus)
        #expect(exit.stderr.contains("task 72 arrived while the worker holds tasks 70 and 71"), "\(exit.stderr)")
    }

    /// SIGKILL the worker's parent: the kernel kills the worker too (PR_SET_PDEATHSIG).
    @Test func theWorkerDiesWithItsParent() throws {
        let parent = Process()
        parent.executableURL = URL(fileURLWithPath: "/bin/sh")
        // The worker's stdin is the shell's (the test keeps the pipe open, so the worker does not
        // see an end of input); then the shell becomes `sleep`, keeping its pid.
        parent.arguments = [
            "-c", "exec 3<&0; \"$0\" --worker-id 9 --coordinator-pid $$ <&3 & exec sleep 60 >/dev/null",
            BuiltExecutable.worker.path,
        ]
        let input = Pipe(), output = Pipe()
        parent.standardInput = input
        parent.standardOutput = output
        try parent.run()
        defer { if parent.isRunning { parent.terminate() } }
        var reader = FrameReader(fd: output.fileHandleForReading.fileDescriptor)
        let hello = try #require(try reader.next()?.helloMessage, "no hello from the worker")
        #expect(try reader.next() == .ready)
        #expect(Processes.isAlive(hello.pid), "the worker runs before its parent dies")
        #expect(Self.parent(of: hello.pid) == parent.processIdentifier)

        kill(parent.processIdentifier, SIGKILL)
        defer { if Processes.isAlive(hello.pid) { kill(hello.pid, SIGKILL) } }  // leave no orphan behind a failing test
        try eventually("the end of worker \(hello.pid), which outlived its parent", timeout: .seconds(30)) {
            !Processes.isAlive(hello.pid)
        }
    }

    /// The parent pid of `pid`, from /proc.
    static func parent(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return Int32(stat[stat.index(close, offsetBy: 2)...].split(separator: " ")[1])
    }
}
