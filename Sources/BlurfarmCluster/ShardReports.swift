import BlurfarmCoordinator
import BlurfarmState
import BlurfarmSystem
import Foundation

/// The reports a Slurm run's array tasks wrote, gathered for `slurm finish` and `slurm status`
/// (``SlurmRunContext/shardReports()``): what each says of each output in a temporary index
/// (``PathIndex``), read a report file an output at a time and looked up a batch of
/// outputs at a time; the reports themselves held without their outputs.
public struct ShardReports {
    /// A report read: its shard, the Slurm job id of its task, its number in the index, and
    /// the report without its outputs.
    struct Read {
        let shard: Int
        let job: Int
        let number: Int
        let head: RunReport
    }

    /// What the reports say of one output (``outputs(_:)``).
    public struct Reported {
        public let status: OutputReport.Status
        /// The output's text as the report's encoder makes it alone (``ReportedText/unindented(_:)``),
        /// for those whose status is in ``ShardReports/kept``: `slurm finish` puts it in the
        /// merged report as it is.
        let text: Data?

        /// The output as the report gave it, for those whose status is in ``ShardReports/kept``.
        public var output: OutputReport? { text.flatMap { try? RunReport.decode(OutputReport.self, from: $0) } }
    }

    private let index: PathIndex
    /// The reports in the order in which a later one says more of an output: by start, then
    /// by the Slurm job id of their task (a shard resubmitted), then as numbered.
    let reports: [Read]
    /// Each report's place in ``reports``, by its number.
    private let rank: [Int: Int]
    /// How each shard some task of which wrote a report ended (``end(of:)``).
    private let ends: [Int: ShardEnd]

    init(index: PathIndex, reports: [Read]) {
        self.index = index
        self.reports = reports.sorted { ($0.head.started, $0.job, $0.number) < ($1.head.started, $1.job, $1.number) }
        rank = Dictionary(uniqueKeysWithValues: self.reports.enumerated().map { ($1.number, $0) })
        // The latest report of each shard says how it ended.
        var ends: [Int: ShardEnd] = [:]
        for report in self.reports { ends[report.shard] = report.head.stopped + report.head.cancelled > 0 ? .stopped : .finished }
        self.ends = ends
    }

    /// The statuses whose outputs are kept whole in the index: those `slurm finish` and `slurm
    /// status` give as the report said them (a written output's checksum, a failure's error).
    /// Of the others, the status alone.
    static let kept: Set<OutputReport.Status> = [.written, .failed, .failedEarlier]

    /// The first report's start, nil when there is none.
    var started: Date? { reports.first?.head.started }
    /// The latest report's settings, nil when there is none.
    var settings: RunSettings? { reports.last?.head.settings }

    /// How a shard's tasks ended, as their reports tell (``end(of:)``).
    public enum ShardEnd: Sendable, Equatable {
        /// No task of it wrote a report: lost, cancelled or out of time.
        case unreported
        /// Its latest report is of a run that ended: each of its outputs that no report of it
        /// names was up to date when it ran (a report lists every other output).
        case finished
        /// Its latest report is of a run stopped or cancelled: the outputs it did not start
        /// are counted there, not named.
        case stopped
    }

    /// How shard `shard` ended.
    func end(of shard: Int) -> ShardEnd { ends[shard] ?? .unreported }

    /// The reports in `folder` (`shard-<I>-<Slurm job id>.json`, each task's `run --report`),
    /// each read an output at a time into a new index; a file that cannot be read to its end
    /// is left out (its shard's outputs are then not reported by it).
    /// - Throws: ``ClusterError/state(_:)`` when the index cannot be made or written.
    package static func of(folder: String) throws(ClusterError) -> ShardReports {
        do throws(StateError) {
            let index = try PathIndex(name: "(a temporary index of the shards' reports)")
            var reports: [Read] = []
            for name in Syscalls.names(inFolder: folder).sorted() {
                guard let match = name.wholeMatch(of: /shard-([0-9]+)-([0-9]+)\.json/), let shard = Int(match.1), let job = Int(match.2)
                else { continue }
                reports += try read(
                    (folder as NSString).appendingPathComponent(name), shard: shard, job: job, numbered: reports.count, into: index)
            }
            return ShardReports(index: index, reports: reports)
        } catch {
            throw .state(error)
        }
    }

    /// Reads the report file at `path`, written by shard `shard`'s task, Slurm job `job`, into `index`,
    /// its reports numbered from `first`: of each output its path and status (decoded whole,
    /// every output of the 100k bench's shards took a fifth of `slurm finish`), and for those
    /// kept, its text as the encoder makes it alone. A file that cannot be read to its end
    /// adds nothing: what it added is forgotten, and it has no report.
    /// - Throws: ``StateError`` when the index cannot be written.
    private static func read(
        _ path: String, shard: Int, job: Int, numbered first: Int, into index: PathIndex
    ) throws(StateError) -> [Read] {
        let decoder = JSONDecoder()
        /// `text` as the encoder makes it alone: the file's indentation taken out, or, for a
        /// file indented otherwise, decoded and encoded again.
        func alone(_ text: Data) throws -> Data {
            try ReportedText.unindented(text) ?? RunReport.json(try RunReport.decode(OutputReport.self, from: text))
        }
        var batch: [(path: String, word: String, text: Data?)] = []
        var batchReport = first
        var failure: StateError?
        func add() throws(StateError) {
            if !batch.isEmpty { try index.add(batch, number: batchReport) }
            batch.removeAll(keepingCapacity: true)
        }
        do {
            let heads = try RunReport.read(streaming: path) { report, text in
                let output = try decoder.decode(OutputReport.PathAndStatus.self, from: text)
                do throws(StateError) {
                    if first + report != batchReport || batch.count == 4096 { try add() }
                } catch {
                    failure = error
                    throw error
                }
                batchReport = first + report
                batch.append((output.output, output.status.rawValue, kept.contains(output.status) ? try alone(text) : nil))
            }
            try add()
            return heads.enumerated().map { Read(shard: shard, job: job, number: first + $0, head: $1) }
        } catch {
            if let failure { throw failure }
            for number in first...batchReport { try index.forget(number: number) }
            return []
        }
    }

    /// What the reports say of each of `outputs` (paths as planned) that one names, by the
    /// output's bytes: the latest report that wrote it, else the latest that names it
    /// (``chosen(_:rank:)``).
    /// - Throws: ``ClusterError/state(_:)`` when the index cannot be read.
    package func outputs(_ outputs: [String]) throws(ClusterError) -> [RealPath.Identity.Bytes: Reported] {
        let found: [RealPath.Identity.Bytes: [PathIndex.Entry]]
        do throws(StateError) {
            found = try index.entries(of: outputs)
        } catch {
            throw .state(error)
        }
        var reported: [RealPath.Identity.Bytes: Reported] = [:]
        for (output, entries) in found {
            guard let entry = Self.chosen(entries, rank: { rank[$0] ?? -1 }),
                let status = OutputReport.Status(rawValue: entry.word)
            else { continue }
            reported[output] = Reported(status: status, text: entry.text)
        }
        return reported
    }

    /// Of one output's `entries` (in the order added), the one the merged report gives: the
    /// latest report's (by `rank`) that wrote it, else the latest's that names it; of two in one
    /// report, the later.
    static func chosen(_ entries: [PathIndex.Entry], rank: (Int) -> Int) -> PathIndex.Entry? {
        entries.enumerated().max { a, b in
            (a.element.word == OutputReport.Status.written.rawValue ? 1 : 0, rank(a.element.number), a.offset)
                < (b.element.word == OutputReport.Status.written.rawValue ? 1 : 0, rank(b.element.number), b.offset)
        }?.element
    }
}
