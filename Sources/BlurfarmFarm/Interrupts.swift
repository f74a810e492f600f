import BlurfarmSystem
import Dispatch
import Foundation

/// SIGINT and SIGTERM during `blurfarm run`: the first asks the run to stop (no new output is
/// started; `onStop` runs, which stops the worker pool, so the images in its hands are
/// abandoned; the in-process engine finishes the outputs in hand; every output already
/// verified is kept, the report is written, the exit status is 128 + the signal: 130 or 143). A second SIGINT exits at once, after removing
/// the temporary files of writes in progress, so no output is ever half-written. The two lines
/// it says go to standard error. ``Farm/startedAnsweringSignals(_:onEvent:)`` makes one.
public final class Interrupts {
    private let sources: [any DispatchSourceSignal]

    /// - Parameters:
    ///   - onStop: runs at the first signal (it stops the workers).
    ///   - removeTemporaryFiles: runs at a second SIGINT, before the process exits at once.
    public init(
        stop: StopRequest, onStop: @escaping @Sendable () -> Void = {},
        removeTemporaryFiles: @escaping @Sendable () -> Void
    ) {
        let queue = DispatchQueue(label: "blurfarm.interrupts")
        sources = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)  // delivered to the dispatch source instead
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler {
                if stop.signalNumber != nil, signalNumber == SIGINT {
                    removeTemporaryFiles()
                    FileHandle.standardError.write(Data("blurfarm: interrupted twice: stopped at once\n".utf8))
                    _exit(128 + SIGINT)
                }
                if stop.signalNumber != nil { return }
                stop.request(signalNumber)
                FileHandle.standardError.write(Data(
                    "blurfarm: stopping: no new output is started; interrupt again to stop at once\n".utf8))
                DispatchQueue.global().async(execute: onStop)  // not on this queue: a second SIGINT must get through
            }
            source.resume()
            return source
        }
    }

    deinit { sources.forEach { $0.cancel() } }
}
