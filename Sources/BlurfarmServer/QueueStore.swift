import BlurfarmAPI
import Foundation
import GRDB

/// A job in the queue's `job` table: a row per job, its columns the API's fields.
extension QueueJob: FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "job"

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// An output in the queue's `output` table, keyed by its job and path.
extension QueueOutput: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "output"
}

/// One change in the event log: what the event stream sends.
public struct QueueEvent: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "event"

    /// Its place in the log (the stream's event id).
    public var id: Int64?
    /// When it happened.
    public var at: Date
    /// What it is about: `job` (a job's state or progress), `output`, `workers` (stored as that text).
    public var kind: StreamEvent.Kind
    /// The job it concerns.
    public var jobId: Int64?
    /// The change as JSON: the job as the API shows it, without its manifest's text (a job's
    /// events would otherwise repeat a submitted manifest by the hundred), or the workers.
    public var data: String

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// What the queue store fails with: the database's error, with the file.
public struct QueueStoreError: Error, Sendable, CustomStringConvertible {
    /// The database file.
    public let path: String
    /// The database's message.
    public let message: String

    public var description: String { "\(path): the queue database: \(message)" }
}

/// The durable queue: jobs, their outputs and the event log in one SQLite database in WAL
/// mode (each change one transaction; a crash or kill -9 of the server keeps every committed
/// change).
public final class QueueStore: Sendable {
    private let database: DatabasePool
    /// The database file.
    public let path: String

    /// Opens (creating it and its tables when needed) the database at `path`.
    public init(path: String) throws(QueueStoreError) {
        self.path = path
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            // WAL with synchronous NORMAL: a commit survives the server's crash or kill -9 (not
            // a power cut's last moments, which the outputs' own records cover), without an
            // fsync per tile rendered.
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
            database = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(database)
        } catch {
            throw QueueStoreError(path: path, message: "\(error)")
        }
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "job") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("name", .text).notNull()
                table.column("manifest", .text).notNull()
                table.column("source", .text).notNull()
                table.column("manifestText", .text).notNull()
                table.column("priority", .integer).notNull()
                table.column("state", .text).notNull().indexed()
                table.column("inFarm", .boolean).notNull()
                table.column("retryFailed", .boolean).notNull()
                table.column("submittedAt", .datetime).notNull()
                table.column("startedAt", .datetime)
                table.column("finishedAt", .datetime)
                for count in [
                    "outputsTotal", "outputsUpToDate", "outputsWritten", "outputsFailed", "outputsCancelled",
                    "tilesDone", "tilesTotal", "pixelsWritten",
                ] {
                    table.column(count, .integer).notNull()
                }
                table.column("error", .text)
            }
            try db.create(table: "output") { table in
                table.column("jobId", .integer).notNull().references("job", onDelete: .cascade)
                table.column("output", .text).notNull()
                table.column("state", .text).notNull()
                table.column("tilesDone", .integer).notNull()
                table.column("tiles", .integer).notNull()
                table.column("pixels", .integer).notNull()
                table.column("seconds", .double)
                table.column("retries", .integer).notNull()
                table.column("checksum", .text)
                table.column("errorKind", .text)
                table.column("error", .text)
                table.column("startedAt", .datetime)
                table.column("finishedAt", .datetime)
                table.primaryKey(["jobId", "output"])
            }
            try db.create(table: "event") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("at", .datetime).notNull()
                table.column("kind", .text).notNull()
                table.column("jobId", .integer)
                table.column("data", .text).notNull()
            }
        }
        migrator.registerMigration("v2: refusal") { db in
            try db.alter(table: "job") { table in table.add(column: "refusal", .text) }
        }
        return migrator
    }

    /// Runs `body` in one write transaction (the store's own: every change is one of its methods).
    func write<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(QueueStoreError) -> T {
        do {
            return try database.write(body)
        } catch {
            throw QueueStoreError(path: path, message: "\(error)")
        }
    }

    /// Runs `body` in a read transaction.
    func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(QueueStoreError) -> T {
        do {
            return try database.read(body)
        } catch {
            throw QueueStoreError(path: path, message: "\(error)")
        }
    }

    /// The job `id`, if any.
    public func job(_ id: Int64) throws(QueueStoreError) -> QueueJob? {
        try read { try QueueJob.fetchOne($0, key: id) }
    }

    /// The jobs, in queue order (priority, then submission), those in `states` only when given.
    public func jobs(states: [JobState]? = nil, limit: Int? = nil) throws(QueueStoreError) -> [QueueJob] {
        try read { db in
            var request = QueueJob.order(Column("priority").desc, Column("id"))
            if let states { request = request.filter(states.map(\.rawValue).contains(Column("state"))) }
            if let limit { request = request.limit(limit) }
            return try request.fetchAll(db)
        }
    }

    /// Removes the finished jobs of `manifest` named `name` but the newest `kept` (by their end,
    /// then id), each with its outputs' rows: the rows `chunk` at a time, each chunk a
    /// transaction of its own (the rows of a million-output job removed at once held the
    /// database's writer, and so the service, for seconds), then the job; a job no longer
    /// finished when its turn comes (retried) is left. A job left part removed (the process
    /// killed) is removed the next time. The ids removed.
    public func forgetFinished(name: String, manifest: String, keeping kept: Int, chunk: Int = 10_000) throws(QueueStoreError) -> [Int64] {
        let finished = JobState.allCases.filter(\.isFinished).map(\.rawValue)
        let among = "state IN (\(finished.map { _ in "?" }.joined(separator: ", ")))"
        let old = try read { db in
            var arguments: StatementArguments = [name, manifest]
            arguments += StatementArguments(finished)
            arguments += [kept]
            return try Int64.fetchAll(
                db, sql: "SELECT id FROM job WHERE name = ? AND manifest = ? AND \(among) ORDER BY finishedAt DESC, id DESC LIMIT -1 OFFSET ?",
                arguments: arguments)
        }
        var gone: [Int64] = []
        for id in old {
            let arguments: StatementArguments = [id] + StatementArguments(finished)
            let stillFinished = "EXISTS (SELECT 1 FROM job WHERE id = ? AND \(among))"
            while try write({ db in
                try db.execute(
                    sql: "DELETE FROM output WHERE rowid IN (SELECT rowid FROM output WHERE jobId = ? AND \(stillFinished) LIMIT ?)",
                    arguments: [id] + arguments + [chunk])
                return db.changesCount
            }) > 0 {}
            if try write({ db in
                try db.execute(sql: "DELETE FROM job WHERE id = ? AND \(among)", arguments: arguments)
                return db.changesCount
            }) > 0 {
                gone.append(id)
            }
        }
        return gone
    }

    /// The outputs of job `id` by path: those in `states` only when given, after the path
    /// `after` when given, at most `limit`.
    public func outputs(
        of id: Int64, states: [JobOutputState]? = nil, after: String? = nil, limit: Int = .max
    ) throws(QueueStoreError) -> [QueueOutput] {
        try read { db in
            // From the (jobId, output) key, in its order: a page costs its rows, not the job's.
            var request = QueueOutput.filter(Column("jobId") == id)
            if let after { request = request.filter(Column("output") > after) }
            if let states { request = request.filter(states.map(\.rawValue).contains(Column("state"))) }
            return try request.order(Column("output")).limit(limit).fetchAll(db)
        }
    }

    /// The event log after event `id` (all of it for 0), oldest first, at most `limit`.
    public func events(after id: Int64, limit: Int = 1000) throws(QueueStoreError) -> [QueueEvent] {
        try read { db in
            try QueueEvent.filter(Column("id") > id).order(Column("id")).limit(limit).fetchAll(db)
        }
    }

    /// Events the log keeps: the newest ``eventRetention``; older ones are removed as new ones
    /// are added (every ``trimEvery`` events). A client further behind gets what is kept.
    public static let eventRetention: Int64 = 10_000
    static let trimEvery: Int64 = 100

    /// Adds `event` to the log in the transaction `db` (its id set), trimming the log to the
    /// newest ``eventRetention`` every ``trimEvery`` events.
    static func append(_ event: inout QueueEvent, _ db: Database) throws {
        try event.insert(db)
        if let id = event.id, id % trimEvery == 0 {
            try db.execute(sql: "DELETE FROM event WHERE id <= ?", arguments: [id - eventRetention])
        }
    }

    // MARK: Changes, each one transaction with the event that tells it

    /// What a change of a job does to the rows of its outputs.
    public enum OutputChange: Sendable {
        /// The farm accepted the job again and starts its outputs anew: the rows of those still
        /// rendering go.
        case forgetRendering
        /// An output started: its row, made or replaced.
        case started(QueueOutput)
        /// An output finished: its row, with when it started (the stored row's; none when it
        /// never started).
        case finished(QueueOutput)
    }

    /// Inserts `job` and the event `event` makes of it as inserted (its id given): the job
    /// and the event, each with its id.
    public func insert(_ job: QueueJob, event: @Sendable (QueueJob) -> QueueEvent) throws(QueueStoreError) -> (QueueJob, QueueEvent) {
        try write { db in
            var inserted = job
            try inserted.insert(db)
            var told = event(inserted)
            try Self.append(&told, db)
            return (inserted, told)
        }
    }

    /// Stores every column of `job` (a row that exists) with `event`: the event with its id.
    public func save(_ job: QueueJob, event: QueueEvent) throws(QueueStoreError) -> QueueEvent {
        try write { db in
            try job.update(db)
            var told = event
            try Self.append(&told, db)
            return told
        }
    }

    /// Changes job `id` with `body`, and the rows of its outputs as each of `outputs` says, in
    /// order, with the event `event` makes of the job changed, in one transaction: the job and
    /// the event (its id given); nil when there is no job `id` (nothing changed).
    public func change(
        _ id: Int64, outputs: [OutputChange] = [], _ body: @Sendable (inout QueueJob) -> Void,
        event: @Sendable (QueueJob) -> QueueEvent
    ) throws(QueueStoreError) -> (QueueJob, QueueEvent)? {
        try write { db -> (QueueJob, QueueEvent)? in
            guard var job = try QueueJob.fetchOne(db, key: id) else { return nil }
            body(&job)
            try job.update(db)
            for change in outputs {
                switch change {
                case .forgetRendering:
                    try QueueOutput.filter(Column("jobId") == id && Column("state") == JobOutputState.rendering.rawValue).deleteAll(db)
                case .started(let output):
                    try Self.store(output, keepingStart: false, db)
                case .finished(let output):
                    try Self.store(output, keepingStart: true, db)
                }
            }
            var told = event(job)
            try Self.append(&told, db)
            return (job, told)
        }
    }

    /// Writes `output`'s row, added or replaced; `keepingStart`: a row already there keeps its
    /// `startedAt`, a new one has none. One prepared statement for every row: GRDB's `upsert`
    /// and the fetch of the row's start built their SQL again for each, 50 µs an output (a
    /// million-output job's ends were stored 13,000 a second, 75 s after its run had ended).
    private static func store(_ output: QueueOutput, keepingStart: Bool, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: keepingStart ? storeKeepingStart : storeWhole)
        try statement.execute(arguments: [
            output.jobId, output.output, output.state.rawValue, output.tilesDone, output.tiles, output.pixels, output.seconds,
            output.retries, output.checksum, output.errorKind, output.error, keepingStart ? nil : output.startedAt,
            output.finishedAt,
        ])
    }

    /// ``store(_:keepingStart:_:)``'s statements.
    private static let (storeWhole, storeKeepingStart) = {
        let columns = [
            "jobId", "output", "state", "tilesDone", "tiles", "pixels", "seconds", "retries", "checksum", "errorKind", "error",
            "startedAt", "finishedAt",
        ]
        func sql(updating updated: [String]) -> String {
            "INSERT INTO output (\(columns.joined(separator: ", "))) VALUES (\(repeatElement("?", count: columns.count).joined(separator: ", ")))"
                + " ON CONFLICT (jobId, output) DO UPDATE SET " + updated.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        }
        return (sql(updating: Array(columns.dropFirst(2))), sql(updating: columns.dropFirst(2).filter { $0 != "startedAt" }))
    }()

    /// Adds `event`, which changes no row (the workers): the event with its id.
    public func log(_ event: QueueEvent) throws(QueueStoreError) -> QueueEvent {
        try write { db in
            var told = event
            try Self.append(&told, db)
            return told
        }
    }

    /// Adds tiles rendered, in one transaction: to each job's `tilesDone` its `count`, and to
    /// each of its outputs its tiles done as last told. The jobs changed (a job no longer in
    /// the queue is skipped).
    public func addTilesDone(_ tiles: [(job: Int64, count: Int, outputs: [String: Int])]) throws(QueueStoreError) -> [QueueJob] {
        try write { db -> [QueueJob] in
            var jobs: [QueueJob] = []
            for (id, count, outputs) in tiles {
                guard var job = try QueueJob.fetchOne(db, key: id) else { continue }
                job.tilesDone += count
                try job.update(db)
                for (output, done) in outputs {
                    try db.execute(
                        sql: "UPDATE output SET tilesDone = ? WHERE jobId = ? AND output = ?", arguments: [done, id, output])
                }
                jobs.append(job)
            }
            return jobs
        }
    }

    /// How many events the log holds.
    public func eventCount() throws(QueueStoreError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM event") ?? 0 }
    }

    /// The last event's id (0 for none).
    public func lastEventID() throws(QueueStoreError) -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM event") ?? 0 }
    }

    /// The number of jobs in each state.
    public func countsByState() throws(QueueStoreError) -> [JobState: Int] {
        try read { db in
            var counts: [JobState: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) AS n FROM job GROUP BY state") {
                if let state = JobState(rawValue: row["state"]) { counts[state] = row["n"] }
            }
            return counts
        }
    }

    /// Outputs written and failed, over every job.
    public func outputTotals() throws(QueueStoreError) -> (written: Int, failed: Int) {
        try read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT COALESCE(SUM(outputsWritten), 0) AS w, COALESCE(SUM(outputsFailed), 0) AS f FROM job")
            return (row?["w"] ?? 0, row?["f"] ?? 0)
        }
    }
}
