import BlurfarmCoordinator
import BlurfarmImageIO
import Dispatch
import Foundation

/// SIGINT and SIGTERM during `blurfarm run`: the first asks the run to stop (no new output is
/// started, the one in hand is finished and written or abandoned, the report is written, the
/// exit status is 128 + the signal: 130 or 143). A second SIGINT exits at once, after removing
/// the temporary files of writes in progress, so no output is ever half-written.
final class Interrupts {
    private let sources: [any DispatchSourceSignal]

    init(stop: StopRequest) {
        let queue = DispatchQueue(label: "blurfarm.interrupts")
        sources = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)  // delivered to the dispatch source instead
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler {
                if stop.signalNumber != nil, signalNumber == SIGINT {
                    ImageWriter.removeTemporaryFiles()
                    FileHandle.standardError.write(Data("blurfarm: interrupted twice: stopped at once\n".utf8))
                    _exit(128 + SIGINT)
                }
                stop.request(signalNumber)
                FileHandle.standardError.write(Data(
                    "blurfarm: stopping: finishing the output in hand; interrupt again to stop at once\n".utf8))
            }
            source.resume()
            return source
        }
    }

    deinit { sources.forEach { $0.cancel() } }
}
