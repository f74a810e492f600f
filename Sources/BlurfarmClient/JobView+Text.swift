import BlurfarmAPI
import BlurfarmSystem

extension JobView {
    /// One line for the job, as `blurfarm jobs` lists it: id, state, priority, outputs done of
    /// all (and how many failed), name.
    public var line: String {
        func padded(_ text: String, _ width: Int, left: Bool = false) -> String {
            let fill = String(repeating: " ", count: max(0, width - text.count))
            return left ? fill + text : text + fill
        }
        let failed = job.outputsFailed
        let counts = "\(progress.outputsDone)/\(progress.outputsTotal)" + (failed > 0 ? " (\(failed) failed)" : "")
        return padded("\(job.id ?? 0)", 5, left: true) + "  " + padded(job.state.rawValue, 10) + " "
            + padded("\(job.priority)", 3, left: true) + "  " + padded(counts, 14) + " " + ShownName.of(job.name)
    }

    /// The summary of a finished job, as `submit --wait` says it: its name, its state, and its
    /// outputs written, up to date and failed.
    public var summary: String {
        "\(ShownName.of(job.name)): \(job.state.rawValue): \(job.outputsWritten) written, "
            + "\(job.outputsUpToDate) up to date, \(job.outputsFailed) failed"
    }
}

extension QueueOutput {
    /// A line for the output when it failed (as `blurfarm job` lists them), else nil.
    public var failureLine: String? {
        state == .failed ? "  failed  \(ShownName.of(output)): \(error ?? "")" : nil
    }
}

extension JobView {
    /// How a finished job ended, as `run` would have ended on it, from the least to the most
    /// serious: of several jobs, the most serious is how `run` ends on them all (it checks every
    /// manifest, then takes every lock, then renders).
    public enum Ending: Int, Comparable, Sendable {
        /// Completed: every output done.
        case completed
        /// Some outputs failed, or it was cancelled.
        case failed
        /// Another process (a cron `run`) held its lock: nothing of it ran.
        case locked
        /// Its manifest no longer checked when its turn came: nothing of it ran.
        case invalid

        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    /// How the job ended (a job not finished counts as ``Ending/failed``).
    public var ending: Ending {
        if job.state == .completed { return .completed }
        switch job.refusal {
        case .locked: return .locked
        case .invalid: return .invalid
        case nil: return .failed
        }
    }
}
