import BlurfarmCore
import BlurfarmState
import BlurfarmCoordinator
import Foundation
import GRDB
import Synchronization
import BlurfarmTestSupport
import Testing

/// The state folder's parts on their own: the records index under several threads, the
/// migration of an earlier version's records file; the job lock; the content hash.
@Suite struct StateFolderTests {
    static func temporaryFolder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-state-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func record(_ i: Int) -> OutputRecord {
        let stamp = FileStamp(size: Int64(i), modified: 1, changed: 2, inode: 3, device: 4)
        return OutputRecord(
            output: "/out/\(i).jpg", input: "/in/\(i).jpg", recipe: "filters=[gaussian sigma=\(i)]",
            inputFile: FileFingerprint(stamp: stamp, hash: String(repeating: "a", count: 32)),
            outputFile: FileFingerprint(stamp: stamp, hash: String(repeating: "b", count: 32)),
            written: Date(timeIntervalSince1970: 1_800_000_000))
    }

    /// The stamp in the names of run reports and Slurm run folders: UTC, to the second (never
    /// rounded up), ISO 8601's basic format; the report's path carries it.
    @Test func theStateFolderStampIsUTCToTheSecond() {
        #expect(Date(timeIntervalSince1970: 0).stateFolderStamp == "19700101T000000Z")
        #expect(Date(timeIntervalSince1970: 1_795_659_625.9).stateFolderStamp == "20261126T022025Z")
        #expect(Date(timeIntervalSince1970: 951_868_799).stateFolderStamp == "20000229T235959Z", "a leap day's last second")
        let report = RunReport(
            job: "web", manifest: "/m.job", started: Date(timeIntervalSince1970: 1_795_659_625.9), finished: Date(),
            settings: RunSettings(
                configuration: nil, workers: 0, threads: 1, decodedImages: 1, tile: 0, pixelLimit: 1, verify: "checksum"),
            outputs: [])
        #expect(report.pathInStateFolder("/state") == "/state/reports/web-20261126T022025Z-\(ProcessInfo.processInfo.processIdentifier).json")
    }

    /// A report written into the state folder keeping `kept` (`reports-kept`) leaves the job's
    /// newest `kept` reports, itself among them whatever its start: for every count of earlier
    /// reports and every `kept`, the others are the newest by their names' start (then by when
    /// they were written). Another job's reports (one whose name begins with this job's), a
    /// file not named as a report, a folder and a link named as the job's reports stay.
    @Test func aReportWrittenKeepsTheJobsNewestReportsAndNothingElseGoes() throws {
        let settings = RunSettings(
            configuration: nil, workers: 0, threads: 1, decodedImages: 1, tile: 0, pixelLimit: 1, verify: "checksum")
        func report(_ job: String, started: TimeInterval) -> RunReport {
            RunReport(
                job: job, manifest: "/m.job", started: Date(timeIntervalSince1970: started), finished: Date(),
                settings: settings, outputs: [])
        }
        let base: TimeInterval = 1_795_659_625
        for earlier in 0...5 {
            for kept in 1...4 {
                let state = try Self.temporaryFolder()
                defer { try? FileManager.default.removeItem(atPath: state) }
                let reports = state + "/reports"
                try FileManager.default.createDirectory(atPath: reports, withIntermediateDirectories: true)
                // The job's earlier reports: one a minute, the last two in one second (the
                // later written later), by other processes.
                var names: [String] = []
                for i in 0..<earlier {
                    let stamp = Date(timeIntervalSince1970: base + TimeInterval(60 * min(i, max(0, earlier - 2)))).stateFolderStamp
                    let name = "photos-\(stamp)-\(1000 - i).json"
                    try Data("{}".utf8).write(to: URL(fileURLWithPath: "\(reports)/\(name)"))
                    try FileManager.default.setAttributes(
                        [.modificationDate: Date(timeIntervalSince1970: base + TimeInterval(i))], ofItemAtPath: "\(reports)/\(name)")
                    names.append(name)
                }
                let others = [
                    "photos-2-20200101T000000Z-1.json", "photos-notes.json", "photos-20200101T000000Z-1.json.tmp",
                    "photos-20200101T000000Z-2.json", "photos-20200101T000000Z-3.json",
                ]
                for name in others.prefix(3) { try Data("{}".utf8).write(to: URL(fileURLWithPath: "\(reports)/\(name)")) }
                try FileManager.default.createDirectory(atPath: "\(reports)/\(others[3])", withIntermediateDirectories: false)
                try FileManager.default.createSymbolicLink(atPath: "\(reports)/\(others[4])", withDestinationPath: "photos-notes.json")
                // Written now, started before every earlier report.
                let written = try report("photos", started: base - 3600).writeInStateFolder(state, keeping: kept)
                let left = Set(try FileManager.default.contentsOfDirectory(atPath: reports))
                let expected = Set(others + [PathName.lastName(of: written)] + names.suffix(kept - 1))
                #expect(left == expected, "\(earlier) earlier, keeping \(kept)")
            }
        }
    }

    /// A batch's lookups, many inputs to a statement (``OutputRecords/lookUpChunk``): each
    /// output's record is the one read alone, those without a record are absent, an input's
    /// outputs are all found, an output another input wrote since is found under that input
    /// only, and the failures are read when asked for and there are any.
    @Test func aBatchOfLookupsFindsWhatEachLookupFinds() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let records = try OutputRecords(folder: folder)
        let count = 2 * OutputRecords.lookUpChunk + 100
        for i in stride(from: 0, to: count, by: 2) { try records.add(Self.record(i)) }
        // A second output of input 4, and output 6 written since by input 8.
        var second = Self.record(4)
        second.output = "/out/4.webp"
        try records.add(second)
        var moved = Self.record(6)
        moved.input = "/in/8.jpg"
        try records.add(moved)
        let inputs = (0..<count).map { "/in/\($0).jpg" }
        let none = try records.lookUp(recordsOf: inputs.shuffled(), failures: true)
        #expect(none.records.count == count / 2 + 1 && none.failures.isEmpty)
        for i in 0..<count {
            let path = "/out/\(i).jpg"
            #expect(none.records[.init(path)] == records.record(for: path), "\(path)")
        }
        #expect(none.records[.init("/out/4.webp")] == second && none.records[.init("/out/6.jpg")] == moved)
        #expect(try records.lookUp(recordsOf: ["/in/6.jpg"], failures: true).records.isEmpty)
        #expect(try records.lookUp(recordsOf: ["/in/8.jpg"], failures: true).records.keys.map(\.text).sorted() == ["/out/6.jpg", "/out/8.jpg"])
        let failure = InputFailure(
            input: "/in/5.jpg", inputFile: Self.record(5).inputFile, reason: "truncated", decoder: "d",
            failed: Date(timeIntervalSince1970: 1_800_000_000))
        try records.add(failure)
        let failed = try records.lookUp(recordsOf: ["/in/5.jpg", "/in/7.jpg"], failures: true)
        #expect(failed.failures == [.init("/in/5.jpg"): failure] && failed.records.isEmpty)
        #expect(try records.lookUp(recordsOf: ["/in/5.jpg"], failures: false).failures.isEmpty)
    }

    /// What the orphans' rule reads of an index: every recorded output's path once, in its
    /// input's order (the plan's), not the outputs' (`/in/1.jpg`'s output `/out/z.jpg` comes
    /// before `/in/2.jpg`'s `/out/a.jpg`); how many there are; and the records of a list of
    /// paths, more than a statement takes, those without one left out.
    @Test func theRecordedPathsComeInTheirInputsOrderAndTheirRecordsOnAsking() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let records = try OutputRecords(folder: folder)
        let count = OutputRecords.lookUpChunk + 300
        var added: [OutputRecord] = []
        for i in (0..<count).shuffled() {
            var record = Self.record(i)
            record.input = String(format: "/in/%05d.jpg", i)
            record.output = String(format: "/out/%05d.jpg", count - i)
            try records.add(record)
            added.append(record)
        }
        var seen: [String] = []
        records.forEachOutput { seen.append($0) }
        #expect(seen == added.sorted { $0.input < $1.input }.map(\.output))
        #expect(records.count == count)
        let asked = added.map(\.output).shuffled() + ["/out/none.jpg"]
        let found = records.records(at: asked)
        #expect(found.count == count)
        #expect(Set(found.map(\.output)) == Set(added.map(\.output)))
        for record in found.prefix(50) { #expect(records.record(for: record.output) == record) }
        #expect(records.records(at: []).isEmpty)
    }

    /// An index an earlier blurfarm kept ("v1", its rows in output order) is migrated on first
    /// use: the same records, each found by its input's lookup, and still one row an output;
    /// the table keyed by input and output, the output paths' unique index beside it, and no
    /// page left free (without the `VACUUM`, 7 of them here; the lookups alone would pass
    /// against "v1" too).
    @Test func anIndexOfAnEarlierVersionIsMigratedOnFirstUse() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Enough rows that the old table's pages outnumber what the index of the paths takes.
        let earlier = ([1, 2, 3] + Array(100..<400)).map(Self.record).sorted { $0.output < $1.output }
        do {
            // The schema as "v1" made it, with GRDB's record of the migration.
            let database = try DatabaseQueue(path: folder + "/" + OutputRecords.fileName)
            try database.write { db in
                try db.execute(sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1');
                    CREATE TABLE "recipe" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "text" TEXT NOT NULL UNIQUE);
                    CREATE TABLE "output" ("output" TEXT PRIMARY KEY NOT NULL, "input" TEXT NOT NULL,
                    "recipe" INTEGER NOT NULL, "inputHash" TEXT NOT NULL, "inputSize" INTEGER NOT NULL,
                    "inputModified" INTEGER NOT NULL, "inputChanged" INTEGER NOT NULL, "inputInode" INTEGER NOT NULL,
                    "inputDevice" INTEGER NOT NULL, "outputHash" TEXT NOT NULL, "outputSize" INTEGER NOT NULL,
                    "outputModified" INTEGER NOT NULL, "outputChanged" INTEGER NOT NULL, "outputInode" INTEGER NOT NULL,
                    "outputDevice" INTEGER NOT NULL, "written" DOUBLE NOT NULL, "width" INTEGER, "height" INTEGER) WITHOUT ROWID;
                    CREATE TABLE "folder" ("path" TEXT PRIMARY KEY NOT NULL, "device" INTEGER NOT NULL,
                    "inode" INTEGER NOT NULL) WITHOUT ROWID;
                    CREATE TABLE "failure" ("input" TEXT PRIMARY KEY NOT NULL, "json" TEXT NOT NULL) WITHOUT ROWID;
                    CREATE TABLE "placeholder" ("input" TEXT PRIMARY KEY NOT NULL, "json" TEXT NOT NULL) WITHOUT ROWID;
                    """)
                for (id, record) in earlier.enumerated() {
                    try db.execute(sql: "INSERT INTO recipe VALUES (?, ?)", arguments: [id + 1, record.recipe])
                    let (i, o) = (record.inputFile.stamp, record.outputFile.stamp)
                    let values: [(any DatabaseValueConvertible)?] = [
                        record.output, record.input, id + 1, record.inputFile.hash, i.size, i.modified, i.changed,
                        Int64(i.inode), Int64(i.device), record.outputFile.hash, o.size, o.modified, o.changed,
                        Int64(o.inode), Int64(o.device), record.written.timeIntervalSinceReferenceDate, record.width,
                        record.height,
                    ]
                    try db.execute(
                        sql: "INSERT INTO output VALUES (" + repeatElement("?", count: values.count).joined(separator: ",") + ")",
                        arguments: StatementArguments(values))
                }
                // Placeholders as JSON, as "v1" and "v2" kept them: one good, two that are not one.
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                try db.execute(
                    sql: "INSERT INTO placeholder VALUES (?, ?), (?, ?), (?, ?)",
                    arguments: [
                        Self.placeholder.input, String(decoding: try encoder.encode(Self.placeholder), as: UTF8.self),
                        "/in/broken.jpg", "{not json", "/in/short.jpg", #"{"input":"/in/short.jpg","width":1}"#,
                    ])
            }
        }
        // Read alone before it is migrated: the placeholders as JSON.
        #expect(try OutputRecords.read(folder: folder).placeholders.count == 1)
        #expect(try OutputRecords.read(folder: folder).records.values.sorted { $0.output < $1.output } == earlier)
        let records = try OutputRecords(folder: folder)
        #expect(records.all == earlier)
        #expect(records.placeholders == [Self.placeholder])
        #expect(records.placeholders(for: [Self.placeholder.input, "/in/broken.jpg"]) == [.init(Self.placeholder.input): Self.placeholder])
        // Its rows now in input order, one an output, and the old rows' pages given back.
        let (key, uniqueIndexes, freePages) = try DatabaseQueue(path: folder + "/" + OutputRecords.fileName).read { db in
            (try db.primaryKey("output").columns, try db.indexes(on: "output").filter(\.isUnique).map(\.columns),
             try Int.fetchOne(db, sql: "PRAGMA freelist_count"))
        }
        #expect(key == ["input", "output"] && uniqueIndexes.contains(["output"]) && freePages == 0, "\(key) \(uniqueIndexes) \(freePages ?? -1)")
        #expect(try records.lookUp(recordsOf: ["/in/2.jpg", "/in/3.jpg"], failures: false).records == [
            .init("/out/2.jpg"): Self.record(2), .init("/out/3.jpg"): Self.record(3),
        ])
        var moved = Self.record(4)
        moved.output = "/out/1.jpg"
        try records.add(moved)
        #expect(try OutputRecords(folder: folder).all == [moved] + earlier.filter { $0.output != "/out/1.jpg" })
    }

    /// An index whose placeholders "v3" kept in a table without row ids, where a placeholder of
    /// about 1,000 bytes (as a photo's data URI makes it) takes a page of its own besides its
    /// row, is moved by "v4" into a table with row ids: the same placeholders, each found by its
    /// input, in less than half the pages, none left free.
    @Test func placeholdersKeptWithoutRowIDsAreMovedIntoATableWithThem() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let placeholders = (0..<300).map { i in
            InputPlaceholder(
                input: "/in/\(i).jpg", inputHash: String(repeating: "0", count: 32), recipe: InputPlaceholder.recipe,
                width: 640, height: 480, thumbHash: "3OcRJYB4d3h/iIeHeEh3eIhw+j2w",
                dataURI: "data:image/png;base64," + String(repeating: "A", count: 800 + i % 60))
        }
        let path = folder + "/" + OutputRecords.fileName
        do {
            let records = try OutputRecords(folder: folder)
            for placeholder in placeholders { try records.add(placeholder) }
            try records.add(Self.record(1))
        }
        // The table as "v3" made it, its rows copied, and GRDB's record of "v4" taken out.
        try DatabaseQueue(path: path).write { db in
            let columns = try db.columns(in: "placeholder").map { "\"\($0.name)\" \($0.type) NOT NULL" }
            try db.execute(sql: """
                CREATE TABLE v3 (\(columns[0]) PRIMARY KEY, \(columns.dropFirst().joined(separator: ", "))) WITHOUT ROWID;
                INSERT INTO v3 SELECT * FROM placeholder; DROP TABLE placeholder; ALTER TABLE v3 RENAME TO placeholder;
                DELETE FROM grdb_migrations WHERE identifier = 'v4';
                """)
        }
        try DatabaseQueue(path: path).vacuum()
        func pages() throws -> (total: Int, free: Int, withoutRowID: Bool) {
            try DatabaseQueue(path: path).read { db in
                (try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0, try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0,
                 try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'placeholder'")?.contains("WITHOUT ROWID") ?? false)
            }
        }
        let before = try pages()
        #expect(before.withoutRowID)
        // Read alone before it is migrated, then migrated on first use.
        #expect(try OutputRecords.read(folder: folder).placeholders.count == placeholders.count)
        let records = try OutputRecords(folder: folder)
        let after = try pages()
        #expect(!after.withoutRowID && after.free == 0 && after.total * 2 < before.total, "\(before) \(after)")
        #expect(records.placeholders == placeholders.sorted { Array($0.input.utf8).lexicographicallyPrecedes(Array($1.input.utf8)) })
        #expect(records.placeholders(for: ["/in/7.jpg", "/in/none.jpg"]) == [.init("/in/7.jpg"): placeholders[7]])
        #expect(records.all == [Self.record(1)])
    }

    /// A placeholder with what JSON escapes in its texts: a byte that is not UTF-8 as the walk
    /// carries it, quotes, a backslash, a control character.
    static let placeholder = InputPlaceholder(
        input: "/in/caf\u{F7E9} \"q\" \\ \u{1}.jpg", inputHash: "00ff", recipe: InputPlaceholder.recipe, width: 640, height: 480,
        thumbHash: "3OcRJYB4d3h/iIeHeEh3eIhw+j2w", dataURI: "data:image/png;base64,iVBORw0KGgo=")

    /// An output map's stamp (``OutputMapStamp``) is kept by its path's bytes (two names one
    /// string to Swift are two maps), replaced by the next, and read back after reopening.
    @Test func aMapsStampIsKeptByItsPath() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (nfc, nfd) = ("/site/caf\u{E9}.json", "/site/cafe\u{301}.json")
        func stamp(_ digest: String, _ inode: UInt64) -> OutputMapStamp {
            OutputMapStamp(
                digest: digest,
                file: FileStamp(size: 10, modified: -1, changed: Int64.max, inode: inode, device: UInt64.max))
        }
        do {
            let records = try OutputRecords(folder: folder)
            #expect(records.mapStamp(at: nfc) == nil)
            try records.keep(stamp("a", 1), at: nfc)
            try records.keep(stamp("b", 2), at: nfd)
            try records.keep(stamp("c", UInt64.max), at: nfc)
        }
        let records = try OutputRecords(folder: folder)
        #expect(records.mapStamp(at: nfc) == stamp("c", UInt64.max))
        #expect(records.mapStamp(at: nfd) == stamp("b", 2))
        #expect(records.mapStamp(at: "/site/other.json") == nil)
    }

    /// A map's stamp keeps its plan's digest with the records' generation
    /// (``OutputMapStamp/plan``): read back while no row of an output or a placeholder has been
    /// added, replaced (even by itself) or removed since, by this process or another, and
    /// not once one has; reads, a change to other tables, and a removal that removes nothing
    /// leave it. A stamp kept before "v6" (no generation) has none.
    @Test func aMapsPlanDigestIsReadBackOnlyWhileTheRecordsAreUnchanged() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = FileStamp(size: 10, modified: 1, changed: 2, inode: 3, device: 4)
        let (map, kept) = ("/site/map.json", OutputMapStamp(digest: "d", file: file, plan: "p"))
        let records = try OutputRecords(folder: folder)
        func keep() throws { try records.keep(kept, at: map) }
        try records.add(Self.record(1))
        try keep()
        #expect(records.mapStamp(at: map) == kept)
        // What leaves the records' generation as it is.
        _ = try records.lookUp(recordsOf: ["/in/1.jpg"], failures: true)
        _ = records.placeholders(for: [Self.placeholder.input])
        _ = records.all
        try records.forgetPlaceholdersOfInputsNotRecorded()
        try records.remove(placeholder: "/in/none.jpg")
        try records.add(InputFailure(
            input: "/in/2.jpg", inputFile: Self.record(2).inputFile, reason: "bad", decoder: "d", failed: Date()))
        try records.add(CreatedFolder(path: "/out", device: 1, inode: 2))
        #expect(records.mapStamp(at: map) == kept)
        #expect(try OutputRecords(folder: folder).mapStamp(at: map) == kept)
        // What changes it, each alone: the plan is no longer vouched for, the rest is kept.
        let changes: [(String, () throws -> Void)] = [
            ("a record added", { try records.add(Self.record(2)) }),
            ("a record replaced by itself", { try records.add(Self.record(1)) }),
            ("a record removed", { try records.remove(output: Self.record(2).output) }),
            ("a placeholder added", { try records.add(Self.placeholder) }),
            ("a placeholder removed", { try records.remove(placeholder: Self.placeholder.input) }),
            ("a placeholder forgotten", {
                try records.add(Self.placeholder)
                try keep()
                try records.forgetPlaceholdersOfInputsNotRecorded()
            }),
            ("a record written by another process", { try OutputRecords(folder: folder).add(Self.record(3)) }),
        ]
        for (change, make) in changes {
            try keep()
            try make()
            #expect(records.mapStamp(at: map) == OutputMapStamp(digest: "d", file: file), "\(change)")
        }
        // A stamp without a generation, as "v6" finds those kept before it.
        try keep()
        try DatabaseQueue(path: folder + "/" + OutputRecords.fileName).write { db in
            try db.execute(sql: "UPDATE mapStamp SET generation = NULL")
        }
        #expect(records.mapStamp(at: map) == OutputMapStamp(digest: "d", file: file))
    }

    @Test func recordsAddedFromManyThreadsAreAllThereAfterReopening() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let records = try OutputRecords(folder: folder)
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for k in 0..<40 {
                do throws(StateError) {
                    try records.add(Self.record(thread * 40 + k))
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        try records.remove(output: "/out/7.jpg")
        let reopened = try OutputRecords(folder: folder)
        #expect(reopened.all.count == 319)
        #expect(reopened.record(for: "/out/7.jpg") == nil)
        #expect(reopened.record(for: "/out/300.jpg") == Self.record(300))
        // Read only, the same records; one row per output, however often one was written.
        #expect(try OutputRecords.read(folder: folder).records.count == 319)
        try reopened.add(Self.record(300))
        #expect(try OutputRecords(folder: folder).all == reopened.all)
    }

    /// The records of an earlier blurfarm (`records.jsonl`, one JSON line per change, maybe a
    /// torn last line) are read as they are by `check --status` before the first run, and
    /// migrated into the index by the first run that opens them: the same records, the line
    /// torn dropped, the old file removed.
    @Test func aRecordsFileOfAnEarlierVersionIsMigratedOnFirstUse() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        func line(_ key: String, _ value: some Encodable) throws -> String {
            String(decoding: try encoder.encode([key: value]), as: UTF8.self) + "\n"
        }
        let failure = InputFailure(
            input: "/in/bad.jpg", inputFile: Self.record(9).inputFile, reason: "not a JPEG", decoder: "8.14; pixel limit 9",
            failed: Date(timeIntervalSince1970: 1_800_000_100))
        let folderMade = CreatedFolder(path: "/out/a", device: 4, inode: 77)
        let text = try line("record", Self.record(1)) + line("record", Self.record(2)) + line("removed", "/out/2.jpg")
            + line("record", Self.record(4)) + line("folder", folderMade) + line("failure", failure)
            + #"{"record":{"output":"/out/5.j"#
        let legacy = folder + "/records.jsonl"
        try text.write(toFile: legacy, atomically: true, encoding: .utf8)
        let before = try OutputRecords.read(folder: folder)
        #expect(before.records.keys.map(\.text).sorted() == ["/out/1.jpg", "/out/4.jpg"])
        #expect(FileManager.default.fileExists(atPath: legacy), "reading changes nothing")
        let records = try OutputRecords(folder: folder)
        #expect(records.all == [Self.record(1), Self.record(4)])
        #expect(records.folders == [folderMade] && records.failures == [failure])
        #expect(!FileManager.default.fileExists(atPath: legacy))
        try records.add(Self.record(3))
        #expect(try OutputRecords(folder: folder).all == [Self.record(1), Self.record(3), Self.record(4)])
        #expect(try OutputRecords.read(folder: folder).records.count == 3)

        // A records file beside the index (a run killed between the migration's commit and the
        // file's removal, or an earlier blurfarm run on the folder since): laid over it, its
        // records the later, when read and when opened.
        var rewritten = Self.record(3)
        rewritten.recipe = "filters=[gaussian sigma=30]"
        try (try line("record", rewritten) + line("record", Self.record(6))).write(toFile: legacy, atomically: true, encoding: .utf8)
        let expected = [Self.record(1), rewritten, Self.record(4), Self.record(6)]
        #expect(try OutputRecords.read(folder: folder).records.values.sorted { $0.output < $1.output } == expected)
        #expect(try OutputRecords(folder: folder).all == expected)
        #expect(!FileManager.default.fileExists(atPath: legacy))
    }

    /// An index that is not one (a damaged file) is an error naming it, never records lost
    /// quietly.
    @Test func aDamagedIndexIsAnErrorNamingTheFile() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/" + OutputRecords.fileName
        try String(repeating: "not a database ", count: 100).write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            _ = try OutputRecords(folder: folder)
        } throws: { error in
            (error as? StateError)?.description.hasPrefix("\(path): cannot open the records") == true
        }
        #expect {
            _ = try OutputRecords.read(folder: folder)
        } throws: { error in
            (error as? StateError)?.description.hasPrefix("\(path): cannot read the records") == true
        }
    }

    @Test func aDamagedLineBeforeTheLastIsAnErrorNamingTheFile() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/records.jsonl"
        try "garbage\n{}\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            _ = try OutputRecords(folder: folder)
        } throws: { error in
            (error as? StateError)?.description == "\(path): line 1 is not a record (remove the file to start afresh)"
        }
    }

    /// A state folder that cannot be made names the folder on the way that cannot be, and why
    /// (Foundation's error said "The operation could not be completed"); the folders on the way
    /// are made.
    @Test func aStateFolderThatCannotBeMadeSaysWhichFolderAndWhy() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("a file".utf8).write(to: URL(fileURLWithPath: folder + "/file"))
        let error = #expect(throws: StateError.self) { try JobLock.acquire(folder + "/file/jobs/a/lock", wait: false) }
        #expect(error?.path == folder + "/file/jobs/a")
        #expect(error?.message == "cannot create the state folder: '\(folder)/file' is not a folder")
        guard case .acquired = try JobLock.acquire(folder + "/made/on/the/way/lock", wait: false) else {
            Issue.record("the lock was not taken")
            return
        }
        #expect(FileManager.default.fileExists(atPath: folder + "/made/on/the/way/lock"))
    }

    @Test func aSecondHolderOfTheLockIsToldThePIDUntilTheFirstLetsGo() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/jobs/a/lock"
        var first: JobLock? = nil
        if case .acquired(let lock) = try JobLock.acquire(path, wait: false) { first = lock }
        #expect(first != nil)
        // flock locks belong to the open file: a second open in this process conflicts too.
        guard case .busy(let holder) = try JobLock.acquire(path, wait: false) else {
            Issue.record("the lock was taken twice")
            return
        }
        #expect(holder == getpid())
        // Another job's lock is free.
        guard case .acquired = try JobLock.acquire(folder + "/jobs/b/lock", wait: false) else {
            Issue.record("another job's lock was busy")
            return
        }
        first = nil
        // Released: free once no process holds the descriptor. A process another test spawns
        // meanwhile holds a copy of every descriptor from its fork to its exec (which closes
        // them: O_CLOEXEC), a moment a loaded machine can stretch; so the test waits for it.
        try eventually("the lock to be released") {
            if case .acquired = try JobLock.acquire(path, wait: false) { return true }
            return false
        }
    }

    @Test func theContentHashIsXXH3OfTheBytes() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // XXH3-128 of the empty input and of "a" (xxhsum -H2 gives the same digits).
        #expect(ContentHash.of("") == "99aa06d3014798d86001c324468d497f")
        #expect(ContentHash.of("a") == "a96faf705af16834e6c632b61e964e1f")
        let file = folder + "/big"
        // Over a chunk, so that the streaming state is checked against the one-shot hash.
        let text = String(repeating: "blurfarm ", count: 300_000)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try ContentHash.ofFile(file) == ContentHash.of(text))
        #expect(try FileFingerprint.take(file).stamp.size == Int64(text.utf8.count))
    }
}
