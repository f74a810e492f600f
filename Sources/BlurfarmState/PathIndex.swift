import Foundation
import GRDB

/// What several lists say of each path, to be looked up a batch of paths at a time, held in
/// SQLite's private temporary database, as ``OutputRecords/temporary()`` is: on disk once it
/// outgrows SQLite's cache of a few MB, gone when let go. One row per path a list names: the
/// list's number, a word, and a text when the reader will need it. `slurm finish` and `slurm
/// status` gather their shards' reports so (the output's path, the report's number, the
/// output's status and text: four reports of 75,000 outputs each, decoded whole and laid over
/// each other in a dictionary, held most of `slurm finish`'s 560 MB), and a run's split (each
/// output's absolute path and its shard: decoded whole, 80 MB of the 139 MB `slurm finish`
/// took once its reports were read so).
package final class PathIndex: Sendable {
    /// What one list says of one path.
    package struct Entry: Sendable, Equatable {
        /// The list's number, as given to ``add(_:number:)``.
        package let number: Int
        package let word: String
        package let text: Data?

        package init(number: Int, word: String, text: Data?) { (self.number, self.word, self.text) = (number, word, text) }
    }

    /// The index's name in errors.
    private let name: String
    private let database: DatabaseQueue

    /// An empty index, named `name` in errors.
    /// - Throws: ``StateError`` when SQLite cannot make it.
    package init(name: String) throws(StateError) {
        self.name = name
        do {
            // Let go, not kept: no journal (a failure to write fails the command that made
            // it), 8 MB of cache before the disk, and the rows indexed by path when first looked
            // up (``entries(of:)``), sorted once. Indexed as they came, with SQLite's defaults,
            // the 300,000 rows of a split went to the file in 520,000 writes.
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA journal_mode = OFF")
                try db.execute(sql: "PRAGMA cache_size = -8192")
            }
            database = try DatabaseQueue(path: "", configuration: configuration)
            try database.write { db in
                try db.execute(sql: "CREATE TABLE entry (path TEXT NOT NULL, number INTEGER NOT NULL, word TEXT NOT NULL, text BLOB)")
            }
        } catch {
            throw StateError(path: name, message: "cannot be made: \(error)")
        }
    }

    /// Adds what list `number` says of each of `paths` (its path, word and text), in one
    /// transaction.
    /// - Throws: ``StateError`` when SQLite cannot write it (its disk full).
    package func add(_ paths: [(path: String, word: String, text: Data?)], number: Int) throws(StateError) {
        do {
            try database.write { db in
                let insert = try db.cachedStatement(sql: "INSERT INTO entry (path, number, word, text) VALUES (?, ?, ?, ?)")
                for path in paths { try insert.execute(arguments: [path.path, number, path.word, path.text]) }
            }
        } catch {
            throw StateError(path: name, message: "cannot be written: \(error)")
        }
    }

    /// Forgets what list `number` said: one that could not be read to its end.
    /// - Throws: ``StateError`` when SQLite cannot write it.
    package func forget(number: Int) throws(StateError) {
        do {
            try database.write { db in try db.execute(sql: "DELETE FROM entry WHERE number = ?", arguments: [number]) }
        } catch {
            throw StateError(path: name, message: "cannot be written: \(error)")
        }
    }

    /// What the lists say of each of `paths` that one names, by the path's bytes, in the order added: read
    /// in one transaction, ``OutputRecords/lookUpChunk`` paths a statement.
    /// - Throws: ``StateError`` when SQLite cannot read it.
    package func entries(of paths: [String]) throws(StateError) -> [RealPath.Identity.Bytes: [Entry]] {
        guard !paths.isEmpty else { return [:] }
        do {
            return try database.inDatabase { db in
                try db.execute(sql: "CREATE INDEX IF NOT EXISTS entryPath ON entry (path)")
                var found: [RealPath.Identity.Bytes: [(row: Int64, entry: Entry)]] = [:]
                try OutputRecords.eachRow(in: db, "SELECT path, rowid, number, word, text FROM entry WHERE path", among: paths) { row in
                    found[.init(row[0]), default: []].append((row[1], Entry(number: row[2], word: row[3], text: row[4])))
                }
                return found.mapValues { $0.sorted { $0.row < $1.row }.map(\.entry) }
            }
        } catch {
            throw StateError(path: name, message: "cannot be read: \(error)")
        }
    }
}
