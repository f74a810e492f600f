import BlurfarmSystem
import Foundation
import GRDB
import Synchronization

/// The records of the outputs one job wrote, of the output folders it created, of the inputs
/// that failed through their own fault (``InputFailure``), of the inputs' placeholders and of
/// what its output map was made of (``OutputMapStamp``), kept
/// in its state folder as an index: the SQLite database `records.sqlite` (through GRDB), one
/// row per output. A run looks up the records of the inputs it plans a batch at a time
/// (``lookUp(recordsOf:failures:)``), reading in proportion to what it looks up and holding no
/// more than a batch's; each
/// change is a transaction on disk before it returns (WAL, `synchronous = FULL`: the `fdatasync`
/// each line of the records file had), so a run that is killed loses no record of what it
/// finished. A state folder an earlier blurfarm kept (`records.jsonl`, one JSON line per
/// change) is migrated on first use, in one transaction, and its file removed; one found beside
/// the index (a run killed between the two, or an earlier blurfarm run since) is laid over it
/// the same way, its records the later. Safe to call from
/// several threads; one process at a time (the job's ``JobLock``) writes a job's records.
public final class OutputRecords: Sendable {
    /// The index's file name in a job's state folder.
    public static let fileName = "records.sqlite"
    /// The files the records may be kept in: the index, its write-ahead log and shared memory
    /// (SQLite's, beside it while it is open), and the file of earlier versions.
    static let fileNames = [fileName, fileName + "-wal", fileName + "-shm", RecordLines.name]

    /// The index file.
    public let path: String
    private let database: DatabaseQueue
    /// The id of each recipe text in the index's `recipe` table, as committed (a variant's
    /// recipe is shared by all its outputs: kept once).
    private let recipeIDs = Mutex<[String: Int64]>([:])

    /// What a records file holds, read without changing anything (``read(folder:)``), or the
    /// records and failures a batch of lookups found (``lookUp(recordsOf:failures:)``). Each
    /// path by its bytes: two whose names are one string to Swift (`é`, and `e` with a
    /// combining accent) are two files, with a record each.
    public struct Contents: Sendable {
        /// The output records, by absolute output path.
        package var records: [RealPath.Identity.Bytes: OutputRecord] = [:]
        /// The created folders, by absolute path.
        package var folders: [RealPath.Identity.Bytes: CreatedFolder] = [:]
        /// The inputs that failed, by absolute input path.
        package var failures: [RealPath.Identity.Bytes: InputFailure] = [:]
        /// The inputs' placeholders, by absolute input path.
        package var placeholders: [RealPath.Identity.Bytes: InputPlaceholder] = [:]

        /// Keyed by their paths: the output's, the folder's, the input's.
        package init(
            records: [OutputRecord] = [], folders: [CreatedFolder] = [], failures: [InputFailure] = [],
            placeholders: [InputPlaceholder] = []
        ) {
            for record in records { self.records[.init(record.output)] = record }
            for folder in folders { self.folders[.init(folder.path)] = folder }
            for failure in failures { self.failures[.init(failure.input)] = failure }
            for placeholder in placeholders { self.placeholders[.init(placeholder.input)] = placeholder }
        }
    }

    /// Opens (creating if need be) the index `records.sqlite` in `folder`, creating the folder
    /// too, and migrates the folder's `records.jsonl` into it when there is one. The folder must
    /// not be a link (``JobStateFolder/openFolder(_:)``), nor any of the records' files in it.
    /// - Throws: ``StateError`` naming the file when it cannot be created, read or written, is
    ///   a link, or when a line of a `records.jsonl` other than the last is not a record.
    public init(folder: String) throws(StateError) {
        let folderDescriptor = try JobStateFolder.openFolder(folder)
        defer { Syscalls.close(folderDescriptor) }
        path = (folder as NSString).appendingPathComponent(Self.fileName)
        try Self.refuseLinks(in: folder)
        do {
            database = try DatabaseQueue(path: path, configuration: Self.configuration(writing: true))
            let migrator = Self.migrator
            let earlier = try database.read { db in try migrator.appliedIdentifiers(db) }
            try migrator.migrate(database)
            // An index of "v1" moved to "v2", or its placeholders moved by "v4": the pages the
            // old rows held are given back (the 81 MB of "v1"'s rows at 300,000 outputs, the
            // 468 MB of 100,000 placeholders "v3" kept), once. A table added is no reason.
            if !earlier.isEmpty, !earlier.contains("v2") || !earlier.contains("v4") { try database.vacuum() }
        } catch {
            throw StateError(path: path, message: "cannot open the records: \(error) (remove the file to start afresh)")
        }
        let legacyPath = (folder as NSString).appendingPathComponent(RecordLines.name)
        guard let legacy = try RecordLines.read(in: folderDescriptor, path: legacyPath) else { return }
        // In one transaction, then the file removed: a run killed before the commit migrates
        // again, one killed after it lays the same records over themselves.
        try write { db, recipes in try Self.insert(legacy, db, recipes: &recipes) }
        do {
            try Syscalls.removeFile(legacyPath)
        } catch {
            throw StateError(path: legacyPath, message: "migrated into \(Self.fileName), but cannot remove: \(error.reason)")
        }
    }

    /// The index in `folder` opened to read alone (nothing created, migrated or written), or nil
    /// when there is none, when an earlier blurfarm made it, or when a `records.jsonl` not yet
    /// migrated lies beside it (``read(folder:)`` reads those whole, as the next run will
    /// migrate them): what `check --status` looks records up in, a batch of inputs at a time
    /// (``lookUp(recordsOf:failures:)``).
    /// - Throws: ``StateError`` naming the file when it is a link or cannot be opened.
    package static func reading(folder: String) throws(StateError) -> OutputRecords? {
        try refuseLinks(in: folder)
        let path = (folder as NSString).appendingPathComponent(fileName)
        let legacyPath = (folder as NSString).appendingPathComponent(RecordLines.name)
        guard Syscalls.linkStatus(path) != nil, Syscalls.linkStatus(legacyPath) == nil else { return nil }
        do {
            let database = try DatabaseQueue(path: path, configuration: configuration(writing: false))
            let migrator = Self.migrator
            let applied = try database.read { db in try migrator.appliedIdentifiers(db) }
            return applied == Set(migrator.migrations) ? OutputRecords(path: path, database: database) : nil
        } catch {
            throw readingFailure(error, path: path, folder: folder)
        }
    }

    /// Why the index at `path` in `folder` could not be read alone: SQLite makes the WAL's
    /// `-wal` and `-shm` files beside an index no run has open, so that a user who may not
    /// write in its folder cannot read it (said so, not "remove the file", which is no answer
    /// to it).
    private static func readingFailure(_ error: any Error, path: String, folder: String) -> StateError {
        guard Syscalls.canCreateFiles(in: folder) else {
            return StateError(
                path: path,
                message: "cannot read the records: \(error); SQLite reads them with its -wal and -shm files beside them, "
                    + "which this user may not make in \(folder): read them as a user who may write there")
        }
        return StateError(path: path, message: "cannot read the records: \(error) (remove the file to start afresh)")
    }

    /// An index in no folder, to be read and then let go: SQLite's private temporary database,
    /// on disk once it outgrows SQLite's cache of a few MB, and gone when closed. Records laid
    /// over each other to be read, changing nothing of the state folder (``layOver(_:failures:folders:forgetting:)``).
    /// - Throws: ``StateError`` when it cannot be created.
    package static func temporary() throws(StateError) -> OutputRecords {
        let path = "(a temporary index of records)"
        do {
            let database = try DatabaseQueue(path: "")
            try migrator.migrate(database)
            return OutputRecords(path: path, database: database)
        } catch {
            throw StateError(path: path, message: "cannot be made: \(error)")
        }
    }

    private init(path: String, database: DatabaseQueue) {
        self.path = path
        self.database = database
    }

    /// How the index is opened: a busy database waited for (a reader beside the run), and for
    /// writing, WAL with each commit synced.
    ///
    /// To read alone (`check`), the file is opened as for writing (read-only when the file is
    /// write-protected: SQLite falls back) with every statement refused that would write
    /// (`query_only`). Opened read-only, SQLite makes the WAL's `-wal` and `-shm` files beside
    /// an index no run has open, and cannot remove them when it closes (the last connection
    /// removes them after a checkpoint, which a read-only one cannot make): `check` left two
    /// empty files in the state folder.
    private static func configuration(writing: Bool) -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            if writing {
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = FULL")
            } else {
                try db.execute(sql: "PRAGMA query_only = ON")
            }
        }
        return configuration
    }

    /// A link where a records file goes is refused (SQLite would follow it): the state folder
    /// is trusted to hold the job's own files only.
    private static func refuseLinks(in folder: String) throws(StateError) {
        for name in fileNames {
            let path = (folder as NSString).appendingPathComponent(name)
            if let info = Syscalls.linkStatus(path), info.st_mode & S_IFMT == S_IFLNK {
                throw StateError(path: path, message: "is a symbolic link: refusing to use it as the records (remove it)")
            }
        }
    }

    /// The index's tables: a row per output (its fingerprints in columns, its recipe by id),
    /// per recipe, per created folder, per remembered failure (as JSON: few, and read whole)
    /// and per placeholder. "v1" kept the outputs' rows in output path order; "v2" keeps them
    /// in input path order, with an index of the output paths (see
    /// ``lookUp(recordsOf:failures:)``); "v3" keeps the placeholders in columns, not as JSON,
    /// and adds a row per output map, its stamp; "v4" keeps the placeholders in a table with
    /// row ids, each in its page; "v5" adds a row per input's size (``KeptSize``); "v6" counts
    /// the changes to the outputs' and placeholders' rows (the records' generation).
    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        /// The columns of an output's row after its paths: its recipe and fingerprints.
        @Sendable func fingerprintColumns(_ table: TableDefinition) {
            table.column("recipe", .integer).notNull()
            for file in ["input", "output"] {
                table.column(file + "Hash", .text).notNull()
                for field in ["Size", "Modified", "Changed", "Inode", "Device"] {
                    table.column(file + field, .integer).notNull()
                }
            }
            table.column("written", .double).notNull()
            table.column("width", .integer)
            table.column("height", .integer)
        }
        migrator.registerMigration("v1") { db in
            try db.create(table: "recipe") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("text", .text).notNull().unique()
            }
            try db.create(table: "output", options: [.withoutRowID]) { table in
                table.primaryKey("output", .text)
                table.column("input", .text).notNull()
                fingerprintColumns(table)
            }
            try db.create(table: "folder", options: [.withoutRowID]) { table in
                table.primaryKey("path", .text)
                table.column("device", .integer).notNull()
                table.column("inode", .integer).notNull()
            }
            for (name, key) in [("failure", "input"), ("placeholder", "input")] {
                try db.create(table: name, options: [.withoutRowID]) { table in
                    table.primaryKey(key, .text)
                    table.column("json", .text).notNull()
                }
            }
        }
        // The rows in input order, which is the order a run walks its inputs in: a batch's
        // lookups read each page once. In output order, the outputs of one folder of inputs
        // lie a page apart wherever a variant's outputs are named by `{stem}` in one folder:
        // a page read from the file for each lookup. The bench's 300,000 outputs, a batch's
        // lookups a statement, SQLite alone: 0.84–1.04 s in output order, 0.19 s in input
        // order. In the same transaction as GRDB's record of it: a run killed during it finds
        // "v1" whole.
        migrator.registerMigration("v2") { db in
            try db.create(table: "outputByInput", options: [.withoutRowID]) { table in
                table.column("output", .text).notNull()
                table.column("input", .text).notNull()
                fingerprintColumns(table)
                table.primaryKey(["input", "output"])
            }
            // The same columns in the same order (its paths, then ``fingerprintColumns``).
            try db.execute(sql: "INSERT INTO outputByInput SELECT * FROM output ORDER BY input, output")
            try db.drop(table: "output")
            try db.rename(table: "outputByInput", to: "output")
            // One row an output: a record of an output another input now writes replaces it.
            try db.create(index: "outputPath", on: "output", columns: ["output"], options: .unique)
        }
        // The placeholders in columns, read without a JSON decoder (one an input, each read
        // by a run with a map: decoding them was a tenth of a no-change run with a map); a
        // row whose JSON is not a placeholder's is left behind (it is made again). And what
        // each output map the job wrote was made of (``OutputMapStamp``), by its path.
        migrator.registerMigration("v3") { db in
            try db.create(table: "placeholderRow", options: [.withoutRowID]) { table in
                table.primaryKey("input", .text)
                for (name, type) in Self.placeholderFields {
                    table.column(name, type == "text" ? .text : .integer).notNull()
                }
            }
            try db.execute(
                sql: "INSERT INTO placeholderRow SELECT input, "
                    + Self.placeholderFields.map { "json_extract(json, '$.\($0.name)')" }.joined(separator: ", ")
                    + " FROM placeholder WHERE json_valid(json) AND "
                    + Self.placeholderFields.map { "json_type(json, '$.\($0.name)') = '\($0.type)'" }.joined(separator: " AND "))
            try db.drop(table: "placeholder")
            try db.rename(table: "placeholderRow", to: "placeholder")
            try db.create(table: "mapStamp", options: [.withoutRowID]) { table in
                table.primaryKey("path", .text)
                table.column("digest", .text).notNull()
                for field in ["size", "modified", "changed", "inode", "device"] {
                    table.column(field, .integer).notNull()
                }
            }
        }
        // The placeholders in a table with row ids, whose rows fit in a page: a placeholder is
        // about 1,000 bytes (its data URI 830–860), past the 1,002 bytes a row of a table
        // without row ids may keep in its page, so that most of "v3"'s rows each took a page
        // of their own besides (the bench's 100,000 placeholders: 468 MB, where these take
        // 144, and a map's lookups of all of them 0.58 s against 0.21 s, SQLite alone).
        migrator.registerMigration("v4") { db in
            try db.create(table: "placeholderRow") { table in
                table.primaryKey("input", .text)
                for (name, type) in Self.placeholderFields {
                    table.column(name, type == "text" ? .text : .integer).notNull()
                }
            }
            try db.execute(sql: "INSERT INTO placeholderRow SELECT \(Self.placeholderColumns) FROM placeholder")
            try db.drop(table: "placeholder")
            try db.rename(table: "placeholderRow", to: "placeholder")
        }
        // The inputs' sizes, each with the stamp its file had (``KeptSize``): a cache the
        // planner looks up a batch of inputs at a time, where "input-widths.json" kept the
        // widths and was read whole (17 MB, and 47 MB of a plan's memory, at 100,000 inputs);
        // with the heights, a shard weighs the inputs by them.
        migrator.registerMigration("v5") { db in
            try db.create(table: "inputSize", options: [.withoutRowID]) { table in
                table.primaryKey("input", .text)
                for field in Self.sizeStampColumns { table.column(field, .integer).notNull() }
                table.column("width", .integer).notNull()
                table.column("height", .integer).notNull()
            }
        }
        // The records' generation: one more with every row of an output or a placeholder
        // added, changed or removed, by whatever writes it (a run, a shard's merge, `prune`,
        // an earlier blurfarm, SQLite's shell), through triggers. What an output map's entries
        // are made of besides the plan; a map's stamp keeps the generation it was made at
        // (``OutputMapStamp/plan``). A migration that makes one of these tables anew makes its
        // triggers again.
        migrator.registerMigration("v6") { db in
            try db.create(table: "generation") { table in
                table.column("value", .integer).notNull()
            }
            try db.execute(sql: "INSERT INTO generation (value) VALUES (0)")
            for table in ["output", "placeholder"] {
                for change in ["INSERT", "UPDATE", "DELETE"] {
                    try db.execute(
                        sql: "CREATE TRIGGER \(table)\(change.capitalized) AFTER \(change) ON \(table) "
                            + "BEGIN UPDATE generation SET value = value + 1; END")
                }
            }
            try db.alter(table: "mapStamp") { table in
                table.add(column: "plan", .text)
                table.add(column: "generation", .integer)
            }
        }
        return migrator
    }

    /// The records in `folder`, read only: nothing is created, migrated, repaired or locked
    /// (`check --status`, a shard's view of its job). A folder that does not exist, or holds no
    /// records, holds none; a `records.jsonl` not yet migrated is laid over the index, as the
    /// next run will.
    /// - Throws: ``StateError`` when a records file cannot be read or is a link, or a line of a
    ///   `records.jsonl` other than the last is not a record.
    public static func read(folder: String) throws(StateError) -> Contents {
        let folderDescriptor: Int32
        do {
            folderDescriptor = try Syscalls.openFolder(folder)
        } catch where error.errno == ENOENT {
            return Contents()
        } catch {
            throw StateError(path: folder, message: "cannot open: \(error.reason)")
        }
        defer { Syscalls.close(folderDescriptor) }
        try refuseLinks(in: folder)
        let path = (folder as NSString).appendingPathComponent(fileName)
        var contents = Contents()
        if Syscalls.linkStatus(path) != nil {
            do {
                let database = try DatabaseQueue(path: path, configuration: configuration(writing: false))
                contents = try database.read { db in try db.tableExists("output") ? Self.contents(db) : Contents() }
            } catch {
                throw readingFailure(error, path: path, folder: folder)
            }
        }
        let legacyPath = (folder as NSString).appendingPathComponent(RecordLines.name)
        if let legacy = try RecordLines.read(in: folderDescriptor, path: legacyPath) {
            contents.records.merge(legacy.records) { _, later in later }
            contents.folders.merge(legacy.folders) { _, later in later }
            contents.failures.merge(legacy.failures) { _, later in later }
            contents.placeholders.merge(legacy.placeholders) { _, later in later }
        }
        return contents
    }

    /// Removes every records file in `folder` (a shard's, merged into its job's).
    /// - Throws: ``StateError`` naming the file that cannot be removed.
    public static func removeFiles(in folder: String) throws(StateError) {
        for name in fileNames {
            let path = (folder as NSString).appendingPathComponent(name)
            do {
                try Syscalls.removeFile(path)
            } catch where error.errno == ENOENT {
                continue
            } catch {
                throw StateError(path: path, message: "merged, but cannot remove: \(error.reason)")
            }
        }
    }

    /// Whether `folder` holds records (an index or an old records file).
    public static func exist(in folder: String) -> Bool {
        fileNames.contains { Syscalls.linkStatus((folder as NSString).appendingPathComponent($0)) != nil }
    }

    // MARK: Reading

    private static let outputColumns = """
        output.output, output.input, recipe.text, output.inputHash, output.inputSize, output.inputModified,
        output.inputChanged, output.inputInode, output.inputDevice, output.outputHash, output.outputSize,
        output.outputModified, output.outputChanged, output.outputInode, output.outputDevice, output.written,
        output.width, output.height FROM output JOIN recipe ON recipe.id = output.recipe
        """

    /// ``outputColumns`` with the recipe's id in place of its text, of the output table alone:
    /// what a lookup reads (``lookUp(recordsOf:failures:)``), each recipe's text read once for
    /// the rows that share it.
    private static let lookedUpColumns = outputColumns
        .replacingOccurrences(of: "recipe.text", with: "output.recipe")
        .replacingOccurrences(of: " JOIN recipe ON recipe.id = output.recipe", with: "")

    /// The record in a row of ``outputColumns`` (or of ``lookedUpColumns``, with its `recipe`
    /// given: the text of the row's recipe).
    private static func record(_ row: Row, recipe: String? = nil) -> OutputRecord {
        OutputRecord(
            output: row[0], input: row[1], recipe: recipe ?? row[2],
            inputFile: FileFingerprint(stamp: stamp(row, at: 4), hash: row[3]),
            outputFile: FileFingerprint(stamp: stamp(row, at: 10), hash: row[9]),
            written: Date(timeIntervalSinceReferenceDate: row[15]), width: row[16], height: row[17])
    }

    /// A stamp from its five columns in `row` from `first` on (size, modification and status
    /// change times, inode, device: ``values(of:)``), as an output's record and a map's stamp
    /// keep it.
    static func stamp(_ row: Row, at first: Int) -> FileStamp {
        FileStamp(
            size: row[first], modified: row[first + 1], changed: row[first + 2],
            inode: UInt64(bitPattern: row[first + 3] as Int64), device: UInt64(bitPattern: row[first + 4] as Int64))
    }

    /// The five columns' values of `stamp` (``stamp(_:at:)``).
    static func values(of stamp: FileStamp) -> [(any DatabaseValueConvertible)?] {
        [stamp.size, stamp.modified, stamp.changed, Int64(bitPattern: stamp.inode), Int64(bitPattern: stamp.device)]
    }

    /// A placeholder's columns after its input, and their JSON types (``InputPlaceholder``'s
    /// fields; "v3" made them of the JSON that "v1" kept).
    private static let placeholderFields: [(name: String, type: String)] = [
        ("inputHash", "text"), ("recipe", "text"), ("width", "integer"), ("height", "integer"), ("thumbHash", "text"),
        ("dataURI", "text"),
    ]

    /// The columns a placeholder is read from (``placeholder(_:)``).
    private static let placeholderColumns = (["input"] + placeholderFields.map(\.name)).joined(separator: ", ")

    private static func placeholder(_ row: Row) -> InputPlaceholder {
        InputPlaceholder(
            input: row[0], inputHash: row[1], recipe: row[2], width: row[3], height: row[4], thumbHash: row[5], dataURI: row[6])
    }

    /// Every placeholder in `db`: in columns, or as JSON in an index not migrated to "v3" (read
    /// alone, ``read(folder:)``), where one that is not a placeholder's is left out, as "v3"
    /// leaves it (it is made again).
    private static func placeholders(_ db: Database) throws -> [InputPlaceholder] {
        guard try db.tableExists("placeholder") else { return [] }
        if try db.columns(in: "placeholder").contains(where: { $0.name == "json" }) {
            return try String.fetchAll(db, sql: "SELECT json FROM placeholder").compactMap { try? json(InputPlaceholder.self, $0) }
        }
        return try Row.fetchAll(db, sql: "SELECT \(placeholderColumns) FROM placeholder").map(placeholder)
    }

    private static func json<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(text.utf8))
    }

    private static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Everything in the index.
    private static func contents(_ db: Database) throws -> Contents {
        var contents = Contents()
        let rows = try Row.fetchCursor(db, sql: "SELECT " + outputColumns)
        while let row = try rows.next() {
            let record = record(row)
            contents.records[.init(record.output)] = record
        }
        for folder in try folders(db) { contents.folders[.init(folder.path)] = folder }
        for failure in try failures(db) { contents.failures[.init(failure.input)] = failure }
        for placeholder in try placeholders(db) { contents.placeholders[.init(placeholder.input)] = placeholder }
        return contents
    }

    /// Every failure remembered in the index.
    private static func failures(_ db: Database) throws -> [InputFailure] {
        try String.fetchAll(db, sql: "SELECT json FROM failure").map { try json(InputFailure.self, $0) }
    }

    /// Every created folder in the index.
    private static func folders(_ db: Database) throws -> [CreatedFolder] {
        try Row.fetchAll(db, sql: "SELECT path, device, inode FROM folder").map { row in
            CreatedFolder(path: row[0], device: UInt64(bitPattern: row[1] as Int64), inode: UInt64(bitPattern: row[2] as Int64))
        }
    }

    /// `body`'s answer from the index; a failure to read is none. Outside a transaction, as
    /// each statement is one: GRDB's `read` begins a read-only transaction each time, and
    /// prepares its statements again (a lookup per output took three times as long).
    func read<T>(_ body: (Database) throws -> T?) -> T? {
        (try? database.inDatabase(body)) ?? nil
    }

    /// `body`'s answer from the index, as ``read(_:)`` asks it; a failure to read is a
    /// ``StateError`` naming the index.
    func reading<T>(_ body: (Database) throws -> T) throws(StateError) -> T {
        do {
            return try database.inDatabase(body)
        } catch {
            throw StateError(path: path, message: "cannot read the records: \(error)")
        }
    }

    /// The record of the output at the absolute path `output`, if any.
    public func record(for output: String) -> OutputRecord? {
        read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT " + Self.outputColumns + " WHERE output.output = ?"), arguments: [output])
                .map { Self.record($0) }
        }
    }

    /// The records of the outputs of `inputs` (absolute paths), by output path, and, when
    /// `failures`, the inputs' remembered failures, read in one transaction: a batch of a
    /// run's lookups, the index's pages read once for all of them (its rows are in input
    /// order, the order the run walks), with one statement for each ``lookUpChunk`` inputs.
    /// One statement an output spent most of a lookup's time in the statement's round trip
    /// and its row's copy, not in SQLite (17% of a 100,000-input no-change run). An output
    /// recorded as another input's is not among them: its record says it is not up to date
    /// as the input is planned now.
    /// - Throws: ``StateError`` naming the index when it cannot be read.
    package func lookUp(recordsOf inputs: [String], failures: Bool) throws(StateError) -> Contents {
        try reading { db in
            var found = Contents()
            // An input's outputs: three at the bench's variants.
            found.records.reserveCapacity(3 * inputs.count)
            try db.inTransaction(.deferred) {
                let recipe = try db.cachedStatement(sql: "SELECT text FROM recipe WHERE id = ?")
                // Each recipe's text read once, and one string shared by its records.
                var recipes: [Int64: String] = [:]
                for first in stride(from: 0, to: inputs.count, by: Self.lookUpChunk) {
                    let chunk = inputs[first..<min(first + Self.lookUpChunk, inputs.count)]
                    let records = try db.cachedStatement(
                        sql: "SELECT " + Self.lookedUpColumns + " WHERE output.input IN ("
                            + String(repeating: "?,", count: chunk.count - 1) + "?)")
                    let rows = try Row.fetchCursor(records, arguments: StatementArguments(Array(chunk)))
                    while let row = try rows.next() {
                        let id: Int64 = row[2]
                        if recipes[id] == nil {
                            guard let text = try String.fetchOne(recipe, arguments: [id]) else { continue }
                            recipes[id] = text
                        }
                        let record = Self.record(row, recipe: recipes[id])
                        found.records[.init(record.output)] = record
                    }
                }
                if failures, try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM failure)")) == true {
                    let failure = try db.cachedStatement(sql: "SELECT json FROM failure WHERE input = ?")
                    for input in inputs {
                        if let text = try String.fetchOne(failure, arguments: [input]) {
                            found.failures[.init(input)] = try Self.json(InputFailure.self, text)
                        }
                    }
                }
                return .commit
            }
            return found
        }
    }

    /// Hands `body` each row that `select` (a statement up to its `IN`) finds among `keys`,
    /// read in one transaction of its own (so never inside ``write(_:)``), ``lookUpChunk``
    /// keys a statement.
    static func eachRow(in db: Database, _ select: String, among keys: [String], _ body: (Row) throws -> Void) throws {
        try db.inTransaction(.deferred) {
            for first in stride(from: 0, to: keys.count, by: lookUpChunk) {
                let chunk = keys[first..<min(first + lookUpChunk, keys.count)]
                let rows = try Row.fetchCursor(
                    db.cachedStatement(sql: select + " IN (" + String(repeating: "?,", count: chunk.count - 1) + "?)"),
                    arguments: StatementArguments(Array(chunk)))
                while let row = try rows.next() { try body(row) }
            }
            return .commit
        }
    }

    /// Inputs looked up by one statement (``lookUp(recordsOf:failures:)``): a run's batch of
    /// 256 in one; far below SQLite's 32,766 parameters.
    package static let lookUpChunk = 1024

    /// Hands `body` the absolute path of each output recorded, a row at a time, in the order
    /// of their inputs' paths (the table's: a plan's order, so that whoever asks the plan
    /// of each reads it in order; by the index of the outputs' paths, the 100,000-input plan
    /// of a no-change `run --prune` was read back a chunk from its file for almost every
    /// output, 22–30 s): their records are not read, nor are the paths held (the orphans'
    /// rule asks of each: `IncrementalRun.orphans(in:kept:)`). An index that cannot be read
    /// hands none.
    package func forEachOutput(_ body: (String) -> Void) {
        _ = read { db -> Bool? in
            let outputs = try String.fetchCursor(db, sql: "SELECT output FROM output ORDER BY input, output")
            while let output = try outputs.next() { body(output) }
            return true
        }
    }

    /// How many outputs are recorded.
    public var count: Int {
        read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM output") } ?? 0
    }

    /// The records of those of `outputs` (absolute paths) that have one, in no order: read in
    /// one transaction, ``lookUpChunk`` paths a statement.
    package func records(at outputs: [String]) -> [OutputRecord] {
        guard !outputs.isEmpty else { return [] }
        return read { db in
            var found: [OutputRecord] = []
            try Self.eachRow(in: db, "SELECT " + Self.outputColumns + " WHERE output.output", among: outputs) { row in
                found.append(Self.record(row))
            }
            return found
        } ?? []
    }

    /// Up to `limit` records in the table's order (by input, then output path: a plan's order),
    /// those after `last` (the input and output of the last record of the page before): the
    /// records a page at a time, each page one statement, whatever the job's size.
    /// - Throws: ``StateError`` naming the index when it cannot be read.
    package func page(after last: (input: String, output: String)?, limit: Int) throws(StateError) -> [OutputRecord] {
        try reading { db in
            let order = " ORDER BY output.input, output.output LIMIT ?"
            guard let last else {
                return try Row.fetchAll(db.cachedStatement(sql: "SELECT " + Self.outputColumns + order), arguments: [limit])
                    .map { Self.record($0) }
            }
            return try Row.fetchAll(
                db.cachedStatement(sql: "SELECT " + Self.outputColumns + " WHERE (output.input, output.output) > (?, ?)" + order),
                arguments: [last.input, last.output, limit]
            ).map { Self.record($0) }
        }
    }

    /// What the index remembers besides its outputs and placeholders: the folders created and
    /// the inputs' failures (few: one a folder of outputs, one a failed input), read whole.
    /// - Throws: ``StateError`` naming the index when it cannot be read.
    package func foldersAndFailures() throws(StateError) -> Contents {
        try reading { db in
            Contents(folders: try Self.folders(db), failures: try Self.failures(db))
        }
    }

    /// Every record, in output path order (by the paths' bytes, as ``RealPath/Identity/Bytes``
    /// orders them: so are the lists below).
    public var all: [OutputRecord] {
        Self.sorted(
            read { db in try Row.fetchAll(db, sql: "SELECT " + Self.outputColumns).map { Self.record($0) } } ?? [],
            by: \.output)
    }

    /// Every folder recorded as created, in path order.
    public var folders: [CreatedFolder] {
        Self.sorted(read { db in try Self.folders(db) } ?? [], by: \.path)
    }

    private static func sorted<T>(_ items: [T], by path: (T) -> String) -> [T] {
        items.sorted { RealPath.Identity.Bytes(path($0)) < RealPath.Identity.Bytes(path($1)) }
    }

    /// The remembered failure of the input at the absolute path `input`, if any.
    public func failure(for input: String) -> InputFailure? {
        read { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT json FROM failure WHERE input = ?"), arguments: [input])
                .map { try Self.json(InputFailure.self, $0) }
        }
    }

    /// Every remembered failure, in input path order.
    public var failures: [InputFailure] {
        Self.sorted(
            read { db in try Self.failures(db) } ?? [],
            by: \.input)
    }

    /// The placeholders of those of `inputs` (absolute paths) that have one, by input: read in
    /// one transaction, ``lookUpChunk`` inputs a statement (the output map's batch of inputs).
    package func placeholders(for inputs: [String]) -> [RealPath.Identity.Bytes: InputPlaceholder] {
        guard !inputs.isEmpty else { return [:] }
        return read { db in
            var found: [RealPath.Identity.Bytes: InputPlaceholder] = [:]
            try Self.eachRow(in: db, "SELECT \(Self.placeholderColumns) FROM placeholder WHERE input", among: inputs) { row in
                let placeholder = Self.placeholder(row)
                found[.init(placeholder.input)] = placeholder
            }
            return found
        } ?? [:]
    }

    /// The stamp kept of the output map at `path` (absolute), if any: its plan's digest only
    /// while the records' generation is the one kept with it (one statement: what it reads is
    /// one state of the index).
    package func mapStamp(at path: String) -> OutputMapStamp? {
        read { db in
            try Row.fetchOne(
                db,
                sql: "SELECT digest, size, modified, changed, inode, device, "
                    + "CASE WHEN generation = (SELECT value FROM generation) THEN plan END FROM mapStamp WHERE path = ?",
                arguments: [path]
            ).map { row in OutputMapStamp(digest: row[0], file: Self.stamp(row, at: 1), plan: row[6]) }
        }
    }

    /// Every placeholder, in input path order.
    public var placeholders: [InputPlaceholder] {
        Self.sorted(
            read { db in try Self.placeholders(db) } ?? [], by: \.input)
    }

    // MARK: Writing

    /// Runs `body` in one transaction, on disk when it returns; `body` is given the recipe ids
    /// it made, kept once the transaction is committed.
    func write(_ body: (Database, inout [String: Int64]) throws -> Void) throws(StateError) {
        var recipes = recipeIDs.withLock { $0 }
        do {
            try database.write { db in try body(db, &recipes) }
        } catch {
            throw StateError(path: path, message: "cannot write a record: \(error)")
        }
        recipeIDs.withLock { $0.merge(recipes) { old, _ in old } }
    }

    /// Runs `body` in one transaction (``write(_:)``), handing it a function that pulls the
    /// next batch from `next`: a failure of `next` (another index that cannot be read) is
    /// thrown as itself, the transaction rolled back, not as a failure to write.
    func write<Batch>(
        pulling next: () throws(StateError) -> Batch?, _ body: (Database, inout [String: Int64], () throws -> Batch?) throws -> Void
    ) throws(StateError) {
        var failed: StateError?
        do throws(StateError) {
            try withoutActuallyEscaping(next) { (next) throws(StateError) in
                try write { db, recipes in
                    try body(db, &recipes) {
                        do throws(StateError) {
                            return try next()
                        } catch {
                            failed = error
                            throw error
                        }
                    }
                }
            }
        } catch {
            throw failed ?? error
        }
    }

    /// The id of `recipe` in the `recipe` table, added if need be.
    private static func recipeID(_ recipe: String, _ db: Database, _ recipes: inout [String: Int64]) throws -> Int64 {
        if let id = recipes[recipe] { return id }
        try db.execute(sql: "INSERT OR IGNORE INTO recipe (text) VALUES (?)", arguments: [recipe])
        guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM recipe WHERE text = ?", arguments: [recipe]) else {
            throw StateError(path: db.description, message: "a recipe just written cannot be read back")
        }
        recipes[recipe] = id
        return id
    }

    private static func insert(_ record: OutputRecord, _ db: Database, _ recipes: inout [String: Int64]) throws {
        let recipe = try recipeID(record.recipe, db, &recipes)
        let values: [(any DatabaseValueConvertible)?] =
            [record.output, record.input, recipe, record.inputFile.hash] + values(of: record.inputFile.stamp)
            + [record.outputFile.hash] + values(of: record.outputFile.stamp)
            + [record.written.timeIntervalSinceReferenceDate, record.width, record.height]
        try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO output (output, input, recipe, inputHash, inputSize, inputModified, inputChanged,
            inputInode, inputDevice, outputHash, outputSize, outputModified, outputChanged, outputInode, outputDevice,
            written, width, height) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: StatementArguments(values))
    }

    private static func insert(_ folder: CreatedFolder, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO folder (path, device, inode) VALUES (?, ?, ?)").execute(
            arguments: [folder.path, Int64(bitPattern: folder.device), Int64(bitPattern: folder.inode)])
    }

    private static func insert(_ failure: InputFailure, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO failure (input, json) VALUES (?, ?)").execute(
            arguments: [failure.input, try json(failure)])
    }

    private static func insert(_ placeholder: InputPlaceholder, _ db: Database) throws {
        try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO placeholder (\(placeholderColumns)) VALUES (?, ?, ?, ?, ?, ?, ?)"
        ).execute(arguments: [
            placeholder.input, placeholder.inputHash, placeholder.recipe, placeholder.width, placeholder.height,
            placeholder.thumbHash, placeholder.dataURI,
        ])
    }

    /// Everything in `contents`, in one transaction.
    private static func insert(_ contents: Contents, _ db: Database, recipes: inout [String: Int64]) throws {
        for record in contents.records.values { try insert(record, db, &recipes) }
        for folder in contents.folders.values { try insert(folder, db) }
        for failure in contents.failures.values { try insert(failure, db) }
        for placeholder in contents.placeholders.values { try insert(placeholder, db) }
    }

    /// Records `record` of an output written (replacing any record of the same output) and
    /// forgets any failure of its input, in one transaction, on disk when it returns.
    public func add(_ record: OutputRecord) throws(StateError) {
        try write { db, recipes in
            try Self.insert(record, db, &recipes)
            try db.cachedStatement(sql: "DELETE FROM failure WHERE input = ?").execute(arguments: [record.input])
        }
    }

    /// Removes the record of `output`, on disk when it returns.
    public func remove(output: String) throws(StateError) {
        try write { db, _ in try db.execute(sql: "DELETE FROM output WHERE output = ?", arguments: [output]) }
    }

    /// Records that blurfarm created `folder`, on disk when it returns.
    public func add(_ folder: CreatedFolder) throws(StateError) {
        try write { db, _ in try Self.insert(folder, db) }
    }

    /// Removes the record of the created folder at `path`, on disk when it returns.
    public func remove(folder path: String) throws(StateError) {
        try write { db, _ in try db.execute(sql: "DELETE FROM folder WHERE path = ?", arguments: [path]) }
    }

    /// Remembers `failure` (replacing any of the same input), on disk when it returns.
    public func add(_ failure: InputFailure) throws(StateError) {
        try write { db, _ in try Self.insert(failure, db) }
    }

    /// Forgets the failure of `input`, on disk when it returns.
    public func remove(failure input: String) throws(StateError) {
        try write { db, _ in try db.execute(sql: "DELETE FROM failure WHERE input = ?", arguments: [input]) }
    }

    /// Keeps `placeholder` (replacing any of the same input), on disk when it returns.
    public func add(_ placeholder: InputPlaceholder) throws(StateError) {
        try write { db, _ in try Self.insert(placeholder, db) }
    }

    /// Forgets the placeholders of the inputs no output record names, on disk when it returns:
    /// one statement, the paths compared by their bytes (SQLite's `BINARY`).
    public func forgetPlaceholdersOfInputsNotRecorded() throws(StateError) {
        try write { db, _ in try db.execute(sql: "DELETE FROM placeholder WHERE input NOT IN (SELECT input FROM output)") }
    }

    /// Forgets the placeholder of `input`, on disk when it returns.
    public func remove(placeholder input: String) throws(StateError) {
        try write { db, _ in try db.execute(sql: "DELETE FROM placeholder WHERE input = ?", arguments: [input]) }
    }

    /// Keeps `stamp` of the output map at `path` (absolute; replacing the one kept), with the
    /// records' generation now (in the same transaction), on disk when it returns: the map
    /// must have been made of these records as they are, which holds because the caller holds
    /// the job's lock (``JobLock``), so nothing else wrote them since it read them.
    package func keep(_ stamp: OutputMapStamp, at path: String) throws(StateError) {
        try write { db, _ in
            try db.execute(
                sql: "INSERT OR REPLACE INTO mapStamp (path, digest, size, modified, changed, inode, device, plan, generation) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, (SELECT value FROM generation))",
                arguments: StatementArguments([path, stamp.digest] + Self.values(of: stamp.file) + [stamp.plan]))
        }
    }

    /// Another's records laid over these, a batch at a time (``layOver(_:failures:folders:forgetting:)``):
    /// `records`, every record the other keeps of some inputs, of which those `takes` says may
    /// be taken (any, by default).
    package struct Overlay {
        package var records: [OutputRecord]
        package var takes: (OutputRecord) -> Bool

        package init(records: [OutputRecord], takes: @escaping (OutputRecord) -> Bool = { _ in true }) {
            self.records = records
            self.takes = takes
        }
    }

    /// Brings these records up to date with another's (a shard's and its job's), in one
    /// transaction, holding one batch of them at a time: `next` is asked for batches
    /// (``Overlay``) until it answers nil. The later of two wins, each path by its bytes:
    /// - a record taken whose output has none here, or one written earlier;
    /// - each of `failures` (the other's) whose input has none here, or one remembered earlier;
    /// - a failure kept here is forgotten when the other wrote an output of its input after it
    ///   failed and `failures` brings none of that input, for the inputs `forgetting` names;
    /// - each of `folders` (the other's) not kept here.
    /// - Throws: ``StateError`` when either side cannot be read, or these cannot be written:
    ///   then nothing is changed.
    package func layOver(
        _ next: () throws(StateError) -> Overlay?, failures: [InputFailure], folders: [CreatedFolder],
        forgetting: (RealPath.Identity.Bytes) -> Bool
    ) throws(StateError) {
        // The other's failure to read is thrown as itself (the transaction rolled back).
        try write(pulling: next) { db, recipes, next in
            var kept: [RealPath.Identity.Bytes: InputFailure] = [:]
            for failure in try Self.failures(db) { kept[.init(failure.input)] = failure }
            // The last output the other wrote of each input whose failure is kept here.
            var lastWritten: [RealPath.Identity.Bytes: Date] = [:]
            while let overlay = try next() {
                var written: [RealPath.Identity.Bytes: Double] = [:]
                let taken = overlay.records.filter(overlay.takes)
                for first in stride(from: 0, to: taken.count, by: Self.lookUpChunk) {
                    let chunk = taken[first..<min(first + Self.lookUpChunk, taken.count)].map(\.output)
                    let rows = try Row.fetchCursor(
                        db.cachedStatement(
                            sql: "SELECT output, written FROM output WHERE output IN ("
                                + String(repeating: "?,", count: chunk.count - 1) + "?)"),
                        arguments: StatementArguments(chunk))
                    while let row = try rows.next() { written[.init(row[0] as String)] = row[1] }
                }
                for record in taken {
                    if let mine = written[.init(record.output)], mine >= record.written.timeIntervalSinceReferenceDate { continue }
                    try Self.insert(record, db, &recipes)
                }
                for record in overlay.records where !kept.isEmpty {
                    let input = RealPath.Identity.Bytes(record.input)
                    if kept[input] != nil { lastWritten[input] = max(lastWritten[input] ?? .distantPast, record.written) }
                }
            }
            var brought: Set<RealPath.Identity.Bytes> = []
            for failure in failures {
                let input = RealPath.Identity.Bytes(failure.input)
                if let mine = kept[input], mine.failed >= failure.failed { continue }
                try Self.insert(failure, db)
                brought.insert(input)
            }
            for (input, failure) in kept where forgetting(input) && !brought.contains(input) {
                if let written = lastWritten[input], written > failure.failed {
                    try db.execute(sql: "DELETE FROM failure WHERE input = ?", arguments: [failure.input])
                }
            }
            for folder in folders {
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO folder (path, device, inode) VALUES (?, ?, ?)").execute(
                    arguments: [folder.path, Int64(bitPattern: folder.device), Int64(bitPattern: folder.inode)])
            }
        }
    }
}
