import Foundation
import Synchronization

/// Slurm's command-line clients (`sbatch`, `scontrol`), found in `PATH` and pointed at the
/// cluster the environment names (`SLURM_CONF`, else `/etc/slurm/slurm.conf`). No database:
/// states come from `scontrol show job`, which knows a job until `MinJobAge` after it ends.
public enum SlurmClient {
    /// Runs `tool` with `arguments`; its standard output.
    /// - Throws: ``ClusterError/toolCannotStart(tool:underlying:)``, ``ClusterError/toolMissing(tool:said:)``
    ///   or ``ClusterError/toolFailed(tool:status:said:)``, with what it said on standard error.
    static func run(_ tool: String, _ arguments: [String]) throws(ClusterError) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw .toolCannotStart(tool: tool, underlying: error)
        }
        // Standard error is read on another thread, so that neither pipe fills up.
        let errors = Mutex(Data())
        let reading = DispatchGroup()
        DispatchQueue.global().async(group: reading) {
            let data = err.fileHandleForReading.readDataToEndOfFile()
            errors.withLock { $0 = data }
        }
        let output = out.fileHandleForReading.readDataToEndOfFile()
        reading.wait()
        process.waitUntilExit()
        let said = String(decoding: errors.withLock { $0 }, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if process.terminationStatus == 127 {
            throw .toolMissing(tool: tool, said: said)
        }
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw .toolFailed(tool: tool, status: process.terminationStatus, said: said)
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Submits a batch job (`sbatch --parsable arguments...`); its job id.
    /// - Throws: ``ClusterError`` when `sbatch` fails or answers something else than a job id.
    public static func submit(_ arguments: [String]) throws(ClusterError) -> String {
        let answer = try run("sbatch", ["--parsable"] + arguments)
        // `--parsable` prints "id" or "id;cluster".
        guard let id = answer.split(separator: "\n").last?.split(separator: ";").first.map(String.init),
            id.allSatisfy(\.isNumber), !id.isEmpty
        else {
            throw .notAJobID(answer: answer.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return id
    }

    /// A job's (or an array task's) state as `scontrol show job` gives it.
    public struct JobState: Sendable, Equatable {
        /// `PENDING`, `RUNNING`, `COMPLETED`, `FAILED`, `CANCELLED`, `TIMEOUT`, `NODE_FAIL`...
        public var state: String
        /// Why it is pending, or `None`.
        public var reason: String
        /// `status:signal`, as Slurm gives it.
        public var exitCode: String

        /// A state as `scontrol` gives it.
        public init(state: String, reason: String, exitCode: String) {
            self.state = state
            self.reason = reason
            self.exitCode = exitCode
        }

        /// Whether it has ended (Slurm will not run it any more).
        public var hasEnded: Bool { Self.ended.contains(state) }

        /// The states of a job that is over.
        public static let ended: Set<String> = [
            "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL",
            "DEADLINE", "REVOKED",
        ]

        /// As status lines show it: `RUNNING`, `FAILED (exit 1)`, `PENDING (Dependency)`.
        public var shown: String {
            if state == "PENDING", reason != "None" { return "\(state) (\(reason))" }
            if state != "COMPLETED", hasEnded, let status = exitCode.split(separator: ":").first, status != "0" {
                return "\(state) (exit \(status))"
            }
            return state
        }
    }

    /// The states of job `id`'s tasks by array index (an array job), or of the job itself under
    /// index -1; empty when Slurm no longer knows the job (`MinJobAge` after it ended).
    /// - Throws: ``ClusterError`` when `scontrol` cannot be run or fails otherwise.
    public static func states(ofJob id: String) throws(ClusterError) -> [Int: JobState] {
        let text: String
        do {
            text = try run("scontrol", ["show", "job", "--oneliner", id])
        } catch {
            if case .toolFailed(_, _, let said) = error, said.contains("Invalid job id") { return [:] }
            throw error
        }
        return parse(text)
    }

    /// `scontrol show job --oneliner` output: one line per job or group of array tasks, fields
    /// `Key=Value` separated by spaces.
    public static func parse(_ text: String) -> [Int: JobState] {
        var states: [Int: JobState] = [:]
        for line in text.split(separator: "\n") {
            var fields: [String: String] = [:]
            for token in line.split(separator: " ") {
                guard let equals = token.firstIndex(of: "=") else { continue }
                let key = String(token[..<equals])
                if fields[key] == nil { fields[key] = String(token[token.index(after: equals)...]) }
            }
            guard let state = fields["JobState"] else { continue }
            let job = JobState(state: state, reason: fields["Reason"] ?? "None", exitCode: fields["ExitCode"] ?? "0:0")
            guard let tasks = fields["ArrayTaskId"] else {
                states[-1] = job
                continue
            }
            for index in indexes(tasks) { states[index] = job }
        }
        return states
    }

    /// The indexes of an array range as Slurm writes them: `3`, `0-7`, `1,4-5`, `0-15:4`,
    /// each with an optional `%limit`.
    public static func indexes(_ text: String) -> [Int] {
        let list = text.split(separator: "%").first ?? ""
        var indexes: [Int] = []
        for part in list.split(separator: ",") {
            let stepped = part.split(separator: ":")
            let step = stepped.count > 1 ? Int(stepped[1]) ?? 1 : 1
            let bounds = stepped[0].split(separator: "-").compactMap { Int($0) }
            guard let low = bounds.first else { continue }
            indexes += Array(stride(from: low, through: bounds.last ?? low, by: max(step, 1)))
        }
        return indexes
    }

    /// `text` quoted for a POSIX shell (single quotes).
    public static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
