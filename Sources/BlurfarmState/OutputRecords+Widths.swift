import GRDB

/// An input's width as its header says (upright, after the EXIF orientation), with the stamp
/// its file had when the header was read: a row of the index's `inputWidth` table ("v5").
public struct KeptWidth: Codable, Hashable, Sendable {
    /// The input's absolute path: the row's key.
    public var input: String
    public var stamp: FileStamp
    public var width: Int

    public init(input: String, stamp: FileStamp, width: Int) {
        self.input = input
        self.stamp = stamp
        self.width = width
    }
}

/// The inputs' widths kept in the index (``KeptWidth``, what ``InputWidths`` caches): looked
/// up a batch of inputs at a time, kept in one transaction, the stale ones walked a page at a
/// time; memory holds a batch or a page, whatever the job's size.
extension OutputRecords {
    /// A width's stamp columns, in ``values(of:)``'s order.
    static let widthStampColumns = ["size", "modified", "changed", "inode", "device"]

    private static let widthColumns = (["input"] + widthStampColumns + ["width"]).joined(separator: ", ")

    private static func width(_ row: Row) -> KeptWidth {
        KeptWidth(input: row[0], stamp: stamp(row, at: 1), width: row[6])
    }

    private static func insert(_ width: KeptWidth, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO inputWidth (\(widthColumns)) VALUES (?, ?, ?, ?, ?, ?, ?)")
            .execute(arguments: StatementArguments([width.input] + values(of: width.stamp) + [width.width]))
    }

    /// The kept widths of those of `inputs` (absolute paths) that have one, by input: read in
    /// one transaction, ``lookUpChunk`` inputs a statement.
    /// - Throws: ``StateError`` naming the index when it cannot be read.
    package func widths(of inputs: [String]) throws(StateError) -> [RealPath.Identity.Bytes: KeptWidth] {
        guard !inputs.isEmpty else { return [:] }
        return try reading { db in
            var found: [RealPath.Identity.Bytes: KeptWidth] = [:]
            found.reserveCapacity(inputs.count)
            try Self.eachRow(in: db, "SELECT \(Self.widthColumns) FROM inputWidth WHERE input", among: inputs) { row in
                let width = Self.width(row)
                found[.init(width.input)] = width
            }
            return found
        }
    }

    /// Up to `limit` kept widths in input path order (SQLite's `BINARY`), those after the
    /// input `last`: the widths a page at a time, each page one statement.
    /// - Throws: ``StateError`` naming the index when it cannot be read.
    package func widthsPage(after last: String?, limit: Int) throws(StateError) -> [KeptWidth] {
        try reading { db in
            let select = "SELECT \(Self.widthColumns) FROM inputWidth"
            let order = " ORDER BY input LIMIT ?"
            return try Row.fetchAll(
                db.cachedStatement(sql: select + (last == nil ? "" : " WHERE input > ?") + order),
                arguments: StatementArguments(last.map { [$0, limit] } ?? [limit])
            ).map(Self.width)
        }
    }

    /// Keeps the widths `next` hands over, a batch at a time until it answers nil (each
    /// replacing the width kept of its input), then, when `kept` is given, forgets every width
    /// whose input it says no to; all in one transaction, on disk when it returns. The kept
    /// widths are walked ``widthsPage`` a page at a time, and only when `expected` (how many
    /// inputs `kept` says yes to, each with a width now) is not their number: when the two
    /// are one, none is stale.
    /// - Throws: ``StateError`` when `next` throws (as itself), or the index cannot be written:
    ///   then nothing is changed.
    package func keepWidths(
        _ next: () throws(StateError) -> [KeptWidth]?, forgettingAllBut kept: ((String) -> Bool)? = nil, expected: Int = 0
    ) throws(StateError) {
        var failed: StateError?
        do throws(StateError) {
            try write { db, _ in
                while true {
                    let batch: [KeptWidth]?
                    do throws(StateError) {
                        batch = try next()
                    } catch {
                        failed = error
                        throw error
                    }
                    guard let batch else { break }
                    for width in batch { try Self.insert(width, db) }
                }
                guard let kept, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM inputWidth") != expected else { return }
                var last: String?
                while true {
                    let inputs = try String.fetchAll(
                        db.cachedStatement(
                            sql: "SELECT input FROM inputWidth" + (last == nil ? "" : " WHERE input > ?") + " ORDER BY input LIMIT ?"),
                        arguments: StatementArguments(last.map { [$0, Self.widthsPage] } ?? [Self.widthsPage]))
                    for input in inputs where !kept(input) {
                        try db.cachedStatement(sql: "DELETE FROM inputWidth WHERE input = ?").execute(arguments: [input])
                    }
                    guard inputs.count == Self.widthsPage else { break }
                    last = inputs.last
                }
            }
        } catch {
            throw failed ?? error
        }
    }

    /// Kept widths read or written together: a page of ``keepWidths(_:forgettingAllBut:expected:)``'s
    /// walk, a batch of a shard's laid over its job's.
    package static let widthsPage = 4096

    /// How many widths are kept.
    package var widthCount: Int {
        read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM inputWidth") } ?? 0
    }
}
