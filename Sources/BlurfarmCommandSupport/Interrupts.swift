import BlurfarmFarm
import BlurfarmSystem
import Dispatch
import Foundation
import Synchronization

/// SIGINT and SIGTERM during `blurfarm run`: the first asks the run to stop (no new output is
/// started; `onStop` runs, which stops the worker pool, so the images in its hands are
/// abandoned; the in-process engine finishes the outputs in hand; every output already
/// verified is kept, the report is written, the exit status is 128 + the signal: 130 or 143). A second SIGINT exits at once, after removing
/// the temporary files of writes in progress, so no output is ever half-written. The two lines
/// it says go to standard error. A command makes one before it starts anything (a worker asked
/// libvips's version, the jobs' locks), so that no signal finds the default action; the farm
/// it then starts is attached (``Farm/startedAnsweringSignals(_:interrupts:onEvent:)``), and a
/// signal that came before is answered then.
public final class Interrupts: Sendable {
    /// The pipe the signal handler writes each signal's number to; nil when it could not be
    /// made (no descriptor left, no thread): the signals then keep their default action, and a
    /// signal ends the process at once (status 130 or 143), never ignored.
    private let pipe: (read: Int32, write: Int32)?
    /// What a signal stops, once attached (``attach(onStop:removeTemporaryFiles:)``).
    private let target: Target

    /// What the first signal stops and what a second SIGINT removes: the farm's, once it is made.
    final class Target: Sendable {
        private let actions = Mutex<(onStop: @Sendable () -> Void, removeTemporaryFiles: @Sendable () -> Void)?>(nil)

        /// Sets the actions; the first signal's stop runs now when the signal came before.
        func attach(onStop: @escaping @Sendable () -> Void, removeTemporaryFiles: @escaping @Sendable () -> Void, stop: StopRequest) {
            actions.withLock { $0 = (onStop, removeTemporaryFiles) }
            if stop.signalNumber != nil { DispatchQueue.global().async(execute: onStop) }
        }

        func onStop() { actions.withLock { $0 }?.onStop() }
        func removeTemporaryFiles() { actions.withLock { $0 }?.removeTemporaryFiles() }
    }

    /// Answers SIGINT and SIGTERM from now on, for `stop`: the first requests it (and stops
    /// what ``attach(onStop:removeTemporaryFiles:)`` attaches: `onStop` stops the workers,
    /// `removeTemporaryFiles` runs at a second SIGINT, before the process exits at once).
    ///
    /// The pipe and the thread that reads it are made here, once: a signal that comes later,
    /// however short of descriptors or threads the machine is by then (a pool starting its
    /// workers takes every descriptor left), needs nothing new to be answered. (A dispatch
    /// signal source registered its `signalfd` when it got round to it: on an exhausted
    /// machine it could find no descriptor left, and SIGTERM, ignored, was lost.)
    public init(stop: StopRequest) {
        self.stop = stop
        let target = Target()
        self.target = target
        guard let pipe = try? Syscalls.pipe() else {
            self.pipe = nil
            return
        }
        // A flood of signals never blocks the handler: a full pipe drops the byte.
        Syscalls.setNonBlocking(pipe.write)
        do {
            try Threads.start(stackSize: 256 << 10) {
                var byte: UInt8 = 0
                while (try? withUnsafeMutableBytes(of: &byte) { buffer throws(SystemCallError) in
                    try Syscalls.read(pipe.read, into: buffer)
                }) == 1 {
                    Self.answer(Int32(byte), stop: stop, target: target)
                }
                Syscalls.close(pipe.read)  // the write end closed: the run is ending
            }
        } catch {
            Syscalls.close(pipe.read)
            Syscalls.close(pipe.write)
            self.pipe = nil
            return
        }
        do throws(SystemCallError) {
            try Syscalls.forwardSignals((SIGINT, SIGTERM), to: pipe.write)
        } catch {
            Syscalls.close(pipe.write)  // the thread reads the end and closes its own
            self.pipe = nil
            return
        }
        self.pipe = pipe
    }

    /// The signal `signalNumber`, answered on the pipe's thread: the first asks the run to
    /// stop; a second SIGINT exits at once, temporary files removed; anything else is said once.
    private static func answer(_ signalNumber: Int32, stop: StopRequest, target: Target) {
        if stop.signalNumber != nil, signalNumber == SIGINT {
            target.removeTemporaryFiles()
            FileHandle.standardError.write(Data("blurfarm: interrupted twice: stopped at once\n".utf8))
            _exit(128 + SIGINT)
        }
        if stop.signalNumber != nil { return }
        stop.request(signalNumber)
        FileHandle.standardError.write(Data(
            "blurfarm: stopping: no new output is started; interrupt again to stop at once\n".utf8))
        DispatchQueue.global().async { target.onStop() }  // not on the pipe's thread: a second SIGINT must get through
    }

    /// The stop the signals request.
    public let stop: StopRequest

    /// What the signals stop from now on: `onStop` at the first (at once when it came before),
    /// `removeTemporaryFiles` at a second SIGINT.
    public func attach(onStop: @escaping @Sendable () -> Void, removeTemporaryFiles: @escaping @Sendable () -> Void) {
        target.attach(onStop: onStop, removeTemporaryFiles: removeTemporaryFiles, stop: stop)
    }

    /// The signals are ignored from here on (the run is ending), and the pipe's thread returns.
    deinit {
        guard let pipe else { return }
        Syscalls.ignoreSignals((SIGINT, SIGTERM))
        Syscalls.close(pipe.write)
    }
}

extension Farm {
    /// A farm with `settings` for a command that runs jobs (`run`, `apply -o`): its events told
    /// to `onEvent`, SIGINT and SIGTERM answered by `interrupts` (made before the command
    /// started anything, for `settings.stop`: the first signal stops the farm and shuts it
    /// down, a second SIGINT exits at once). The caller keeps the interrupts alive and shuts
    /// the farm down when done, however it ends.
    public static func startedAnsweringSignals(
        _ settings: FarmSettings, interrupts: Interrupts, onEvent: @escaping @Sendable (FarmEvent) -> Void
    ) -> Farm {
        let farm = Farm(settings)
        farm.onEvent(onEvent)
        interrupts.attach(onStop: farm.shutdown) { _ = farm.removeTemporaryFiles() }
        return farm
    }
}

