import BlurfarmCore
import BlurfarmImageIO
import BlurfarmState
import BlurfarmSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The version of the libvips the workers load, as `run`'s recipes name it, found without
/// mapping libvips in this process: from the state folder's cache (``LibvipsVersionCache``)
/// while the dynamic loader would find the same file, else asked of a worker process
/// (`blurfarm-worker --libvips-version`, on a core of its own while the jobs are planned), its
/// answer kept in the cache. Mapping libvips takes about 25 ms (35,000 relocations over its
/// hundred libraries) and holds the loader's lock meanwhile: every thread a coordinator started
/// in that time (a job's, its lanes', the pool's) waited for it, and the workers with them.
public final class LibvipsVersion: Sendable {
    /// Where the version came from.
    public enum Source: Sendable, Equatable {
        /// The state folder's cache.
        case cache
        /// A worker process asked now.
        case worker
        /// Neither: the worker could not be started, did not answer in time, failed, or could
        /// not load libvips (the caller asks the library itself).
        case none
    }

    private enum State {
        case asking(pid: pid_t, output: Int32)
        case known(String?, Source)
    }

    private let state: Mutex<State>
    /// The worker while it is not reaped: ``end(stopped:)`` may kill it only then (the number of a
    /// process reaped may be another's). Its reaping is done under this lock.
    private let unreaped = Mutex<pid_t?>(nil)
    private let stateFolder: String
    private let worker: String
    private let environment: [String: String]

    /// How long the worker may take to answer; after it, it is killed and there is no answer.
    public static let deadline: Duration = .seconds(10)

    /// Looks the version up: the cache in `stateFolder` when it holds for the worker executable
    /// `worker` in `environment`, else starts that worker asking it (with `environment` and,
    /// unless it says otherwise, `SWIFT_BACKTRACE=enable=no` as the pool's workers have it; its
    /// standard input empty, its standard error discarded).
    public init(stateFolder: String, worker: String, environment: [String: String]) {
        (self.stateFolder, self.worker, self.environment) = (stateFolder, worker, environment)
        if let kept = LibvipsVersionCache.version(inStateFolder: stateFolder, worker: worker, environment: environment) {
            state = Mutex(.known(kept, .cache))
        } else {
            let variables = environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { given, _ in given }
            let started = Self.start(worker, environment: variables.map { "\($0.key)=\($0.value)" })
            state = Mutex(started)
            if case .asking(let pid, _) = started { unreaped.withLock { $0 = pid } }
            // Its answer is read as soon as it comes, on a thread of its own: the worker is
            // reaped and the answer kept even by a run that never asks (nothing written).
            try? Threads.start { [self] in _ = answer }
        }
    }

    /// The version ("8.14.1"), waiting for the worker's answer; nil when ``source`` is `none`.
    public var version: String? { answer.version }

    /// Where ``version`` came from (waiting for the worker's answer).
    public var source: Source { answer.source }

    private var answer: (version: String?, source: Source) {
        state.withLock { state in
            if case .asking(let pid, let output) = state {
                let report = Self.report(of: pid, on: output, unreaped: unreaped)
                if let report {
                    // Kept for the next run, when the file the worker mapped is the one there
                    // now; a state folder that cannot be written costs the next run a worker's answer.
                    try? LibvipsVersionCache(
                        version: report.version, file: report.file, inode: report.inode, searchPath: report.searchPath,
                        worker: worker, environment: environment)?.save(inStateFolder: stateFolder)
                }
                state = .known(report?.version, report == nil ? .none : .worker)
            }
            guard case .known(let version, let source) = state else { return (nil, .none) }
            return (version, source)
        }
    }

    private static func start(_ executable: String, environment: [String]) -> State {
        guard let output = try? Syscalls.pipe() else { return .known(nil, .none) }
        defer { Syscalls.close(output.write) }
        guard let input = try? Syscalls.openForReading("/dev/null") else {
            Syscalls.close(output.read)
            return .known(nil, .none)
        }
        defer { Syscalls.close(input) }
        // Its complaints (a worker of another build that does not know the option) are not the
        // run's: without an answer, this process asks its own libvips.
        let silence = try? Syscalls.openFile("/dev/null", in: AT_FDCWD, flags: O_WRONLY)
        defer { silence.map(Syscalls.close) }
        do throws(SystemCallError) {
            let pid = try Syscalls.spawn(
                executable, arguments: [executable, "--libvips-version"], environment: Syscalls.CStrings(environment),
                stdin: input, stdout: output.write, stderr: silence)
            return .asking(pid: pid, output: output.read)
        } catch {
            Syscalls.close(output.read)
            return .known(nil, .none)
        }
    }

    /// Ends the asking with the run, so that no process of the run outlives it: a worker that
    /// has not answered yet is waited for (its answer kept for the next run, as by a run that
    /// asked), or, when `stopped` (a run stopped by a signal ends at once), killed; reaped
    /// either way. Nothing to do once the version is known.
    public func end(stopped: Bool) {
        if stopped {
            unreaped.withLock { pid in
                if let pid { Syscalls.kill(pid) }
            }
        }
        _ = answer  // reaped: by the thread reading the answer, or here when there is none
    }

    /// What the worker says (``LibvipsReport/init(text:)``), read to its end, the worker waited
    /// for (reaped under `unreaped`'s lock, which it then clears); nil when it does not answer
    /// and end within ``deadline`` (it is killed), fails, or says anything else. Closes its
    /// output.
    private static func report(of pid: pid_t, on output: Int32, unreaped: borrowing Mutex<pid_t?>) -> LibvipsReport? {
        defer { Syscalls.close(output) }
        let end = ContinuousClock.now + deadline
        func left() -> Int32 { Int32(clamping: max(0, (end - ContinuousClock.now).milliseconds)) }
        var bytes: [UInt8] = []
        reading: while bytes.count < maximumBytes {
            guard (try? Syscalls.pollReadable([output], milliseconds: left()))?.isEmpty == false else { break }
            switch Syscalls.readAvailable(output) {
            case .bytes(let more): bytes += more
            case .wouldBlock: continue
            case .failed: break reading  // its end
            }
        }
        // Its output ended (or it took too long, or wrote too much): it exits within the deadline or is killed.
        let status = unreaped.withLock { unreaped -> Int32? in
            unreaped = nil
            return Syscalls.endStatus(pid, killedAfter: end)
        }
        guard status == 0, bytes.count < maximumBytes else { return nil }
        return LibvipsReport(text: String(decoding: bytes, as: UTF8.self))
    }

    /// More than a report: the worker's answer is not read further.
    static let maximumBytes = 64 << 10

    deinit { end(stopped: true) }  // never read (no thread for it): the worker is not left behind
}
