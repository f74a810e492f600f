import GRDB

/// An input's size in pixels as its header says (upright, after the EXIF orientation), with
/// the stamp its file had when the header was read: a row of the index's `inputSize` table
/// ("v5").
public struct KeptSize: Codable, Hashable, Sendable {
    /// The input's absolute path: the row's key.
    public var input: String
    public var stamp: FileStamp
    public var width: Int
    public var height: Int

    public init(input: String, stamp: FileStamp, width: Int, height: Int) {
        self.input = input
        self.stamp = stamp
        self.width = width
        self.height = height
    }
}

/// The inputs' sizes kept in the index (``KeptSize``, what `InputSizes` caches): looked up a
/// batch of inputs at a time, kept in one transaction, the stale ones walked a page at a
/// time; memory holds a batch or a page, whatever the job's size.
extension OutputRecords {
    /// A size's stamp columns, in ``values(of:)``'s order.
    static let sizeStampColumns = ["size", "modified", "changed", "inode", "device"]

    private static let sizeColumns = (["input"] + sizeStampColumns + ["width", "height"]).joined(separator: ", ")

    private static func size(_ row: Row) -> KeptSize {
        KeptSize(input: row[0], stamp: stamp(row, at: 1), width: row[6], height: row[7])
    }

    private static func insert(_ size: KeptSize, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO inputSize (\(sizeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            .execute(arguments: StatementArguments([size.input] + values(of: size.stamp) + [size.width, size.height]))
    }

    /// The kept sizes of those of `inputs` (absolute paths) that have one, by input: read in
    /// one transaction, ``lookUpChunk`` inputs a statement.
    /// - Throws: ``StateError`` naming the index when it cannot be read.
    package func sizes(of inputs: [String]) throws(StateError) -> [RealPath.Identity.Bytes: KeptSize] {
        guard !inputs.isEmpty else { return [:] }
        return try reading { db in
            var found: [RealPath.Identity.Bytes: KeptSize] = [:]
            found.reserveCapacity(inputs.count)
            try Self.eachRow(in: db, "SELECT \(Self.sizeColumns) FROM inputSize WHERE input", among: inputs) { row in
                let size = Self.size(row)
                found[.init(size.input)] = size
            }
            return found
        }
    }

    /// Up to `limit` kept sizes in input path order (SQLite's `BINARY`), those after the
    /// input `last`: the sizes a page at a time, each page one statement.
    /// - Throws: ``StateError`` naming the index when it cannot be read.
    package func sizesPage(after last: String?, limit: Int) throws(StateError) -> [KeptSize] {
        try reading { db in
            let select = "SELECT \(Self.sizeColumns) FROM inputSize"
            let order = " ORDER BY input LIMIT ?"
            return try Row.fetchAll(
                db.cachedStatement(sql: select + (last == nil ? "" : " WHERE input > ?") + order),
                arguments: StatementArguments(last.map { [$0, limit] } ?? [limit])
            ).map(Self.size)
        }
    }

    /// Keeps the sizes `next` hands over, a batch at a time until it answers nil (each
    /// replacing the size kept of its input), then, when `kept` is given, forgets every size
    /// whose input it says no to; all in one transaction, on disk when it returns. The kept
    /// sizes are walked ``sizesPage`` a page at a time, and only when `expected` (how many
    /// inputs `kept` says yes to, each with a size now) is not their number: when the two
    /// are one, none is stale.
    /// - Throws: ``StateError`` when `next` throws (as itself), or the index cannot be written:
    ///   then nothing is changed.
    package func keepSizes(
        _ next: () throws(StateError) -> [KeptSize]?, forgettingAllBut kept: ((String) -> Bool)? = nil, expected: Int = 0
    ) throws(StateError) {
        try write(pulling: next) { db, _, next in
            while let batch = try next() {
                for size in batch { try Self.insert(size, db) }
            }
            guard let kept, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM inputSize") != expected else { return }
            var last: String?
            while true {
                let inputs = try String.fetchAll(
                    db.cachedStatement(
                        sql: "SELECT input FROM inputSize" + (last == nil ? "" : " WHERE input > ?") + " ORDER BY input LIMIT ?"),
                    arguments: StatementArguments(last.map { [$0, Self.sizesPage] } ?? [Self.sizesPage]))
                for input in inputs where !kept(input) {
                    try db.cachedStatement(sql: "DELETE FROM inputSize WHERE input = ?").execute(arguments: [input])
                }
                guard inputs.count == Self.sizesPage else { break }
                last = inputs.last
            }
        }
    }

    /// Kept sizes read or written together: a page of ``keepSizes(_:forgettingAllBut:expected:)``'s
    /// walk, a batch of a shard's laid over its job's.
    package static let sizesPage = 4096

    /// How many sizes are kept.
    package var sizeCount: Int {
        read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM inputSize") } ?? 0
    }
}
