import Foundation
import GRDB

/// What several reports say of each output, by the output's path, to be looked up a batch of
/// outputs at a time: `slurm finish` and `slurm status` gather their shards' reports so, read
/// one output at a time (four shards' reports of 75,000 outputs each, decoded whole and laid
/// over each other in a dictionary, held most of `slurm finish`'s 560 MB). SQLite's private
/// temporary database, as ``OutputRecords/temporary()``: on disk once it outgrows SQLite's
/// cache of a few MB, gone when let go. One row per output a report names: the report's
/// number, the output's status, and its text when the reader will need it.
package final class ReportedIndex: Sendable {
    /// What one report says of one output.
    package struct Entry: Sendable, Equatable {
        /// The report's number, as given to ``add(report:_:)``.
        package let report: Int
        /// The output's status, as the report spells it.
        package let status: String
        /// Its text, when the report's reader kept it.
        package let text: Data?

        package init(report: Int, status: String, text: Data?) { (self.report, self.status, self.text) = (report, status, text) }
    }

    private static let name = "(a temporary index of the reports' outputs)"
    private let database: DatabaseQueue

    /// An empty index.
    /// - Throws: ``StateError`` when SQLite cannot make it.
    package init() throws(StateError) {
        do {
            database = try DatabaseQueue(path: "")
            try database.write { db in
                try db.execute(
                    sql: "CREATE TABLE reported (output TEXT NOT NULL, report INTEGER NOT NULL, status TEXT NOT NULL, text BLOB)")
                try db.execute(sql: "CREATE INDEX reportedOutput ON reported (output)")
            }
        } catch {
            throw StateError(path: Self.name, message: "cannot be made: \(error)")
        }
    }

    /// Adds what report `report` says of `outputs` (each output's path, status and text), in
    /// one transaction.
    /// - Throws: ``StateError`` when SQLite cannot write it (its disk full).
    package func add(report: Int, _ outputs: [(output: String, status: String, text: Data?)]) throws(StateError) {
        do {
            try database.write { db in
                let insert = try db.cachedStatement(sql: "INSERT INTO reported (output, report, status, text) VALUES (?, ?, ?, ?)")
                for output in outputs { try insert.execute(arguments: [output.output, report, output.status, output.text]) }
            }
        } catch {
            throw StateError(path: Self.name, message: "cannot be written: \(error)")
        }
    }

    /// Forgets what report `report` said: one that could not be read to its end.
    /// - Throws: ``StateError`` when SQLite cannot write it.
    package func forget(report: Int) throws(StateError) {
        do {
            try database.write { db in try db.execute(sql: "DELETE FROM reported WHERE report = ?", arguments: [report]) }
        } catch {
            throw StateError(path: Self.name, message: "cannot be written: \(error)")
        }
    }

    /// What the reports say of each of `outputs` that one names, by output path, in the order
    /// added: read in one transaction, ``OutputRecords/lookUpChunk`` paths a statement.
    /// - Throws: ``StateError`` when SQLite cannot read it.
    package func entries(of outputs: [String]) throws(StateError) -> [String: [Entry]] {
        guard !outputs.isEmpty else { return [:] }
        do {
            return try database.inDatabase { db in
                var found: [String: [(row: Int64, entry: Entry)]] = [:]
                try OutputRecords.eachRow(in: db, "SELECT output, rowid, report, status, text FROM reported WHERE output", among: outputs) {
                    row in found[row[0], default: []].append((row[1], Entry(report: row[2], status: row[3], text: row[4])))
                }
                return found.mapValues { $0.sorted { $0.row < $1.row }.map(\.entry) }
            }
        } catch {
            throw StateError(path: Self.name, message: "cannot be read: \(error)")
        }
    }
}
