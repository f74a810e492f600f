import BlurfarmSystem
import Dispatch
import Foundation

/// SIGINT and SIGTERM during `blurfarm run`: the first asks the run to stop (no new output is
/// started; `onStop` runs, which stops the worker pool, so the images in its hands are
/// abandoned; the in-process engine finishes the outputs in hand; every output already
/// verified is kept, the report is written, the exit status is 128 + the signal: 130 or 143). A second SIGINT exits at once, after removing
/// the temporary files of writes in progress, so no output is ever half-written. The two lines
/// it says go to standard error. ``Farm/startedAnsweringSignals(_:onEvent:)`` makes one.
public final class Interrupts: Sendable {
    /// The pipe the signal handler writes each signal's number to; nil when it could not be
    /// made (no descriptor left, no thread): the signals then keep their default action, and a
    /// signal ends the process at once (status 130 or 143), never ignored.
    private let pipe: (read: Int32, write: Int32)?

    /// - Parameters:
    ///   - onStop: runs at the first signal (it stops the workers).
    ///   - removeTemporaryFiles: runs at a second SIGINT, before the process exits at once.
    ///
    /// The pipe and the thread that reads it are made here, once: a signal that comes later,
    /// however short of descriptors or threads the machine is by then (a pool starting its
    /// workers takes every descriptor left), needs nothing new to be answered. (A dispatch
    /// signal source registered its `signalfd` when it got round to it: on an exhausted
    /// machine it could find no descriptor left, and SIGTERM, ignored, was lost.)
    public init(
        stop: StopRequest, onStop: @escaping @Sendable () -> Void = {},
        removeTemporaryFiles: @escaping @Sendable () -> Void
    ) {
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
                    Self.answer(Int32(byte), stop: stop, onStop: onStop, removeTemporaryFiles: removeTemporaryFiles)
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
    private static func answer(
        _ signalNumber: Int32, stop: StopRequest, onStop: @escaping @Sendable () -> Void,
        removeTemporaryFiles: @Sendable () -> Void
    ) {
        if stop.signalNumber != nil, signalNumber == SIGINT {
            removeTemporaryFiles()
            FileHandle.standardError.write(Data("blurfarm: interrupted twice: stopped at once\n".utf8))
            _exit(128 + SIGINT)
        }
        if stop.signalNumber != nil { return }
        stop.request(signalNumber)
        FileHandle.standardError.write(Data(
            "blurfarm: stopping: no new output is started; interrupt again to stop at once\n".utf8))
        DispatchQueue.global().async(execute: onStop)  // not on the pipe's thread: a second SIGINT must get through
    }

    /// The signals are ignored from here on (the run is ending), and the pipe's thread returns.
    deinit {
        guard let pipe else { return }
        Syscalls.ignoreSignals((SIGINT, SIGTERM))
        Syscalls.close(pipe.write)
    }
}
