import BlurfarmState

extension JobPlanner {
    /// The files a job's input globs found, each once, in plan order: sorted by their paths'
    /// bytes, each taken by the first glob (in the manifest's order) that took it. The walk
    /// hands each file over as it finds it (no list of the walk's own). The paths are held
    /// as bytes: as a dictionary from path to entry, then a sorted copy of it, the 100,000
    /// inputs of a plan took 12 MB while it planned, and two files whose names were equal
    /// strings but other bytes (`é` and `e` with a combining accent, which Swift's `==` takes
    /// for one) were one input: the second was never planned. Everything is held in segments
    /// that never move (``Segments``): handed over to arrays grown by doubling, not knowing the
    /// walk's size, the files raised the peak of a 100,000-input run by 4.6 MiB, where with
    /// segments it fell by 3.8 MiB (the walk's list of strings gone: a heap peak of 13 MB
    /// where it was 20). Sorted, the files keep their places and an order is kept beside them.
    /// The files' identities are held apart, until the index of the inputs takes them
    /// (``identity(_:)``, ``dropIdentities()``). About 64 bytes a file in all, with its path.
    struct FoundInputs {
        private var bytes = ByteSegments()
        private var entries = Segments<Entry>()
        private var identities = Segments<(device: UInt64, inode: UInt64)>()
        /// The entries in plan order, once sealed (nil: not sealed since the last file added).
        private var order: [UInt32]?

        private struct Entry {
            /// Where the path's bytes are in ``bytes``.
            let path: ByteSegments.Place
            /// The glob that took it, by its place among the job's input globs.
            let glob: UInt32
            /// What the walk's `stat` saw of it.
            let seen: SeenStamp
        }

        /// Adds the file at `relative`, taken by the input glob at `glob`, unless an earlier
        /// glob took it (the duplicates go when the files are put in order).
        mutating func add(_ relative: String, glob: Int, file: Stated) {
            entries.append(Entry(path: bytes.append(relative.utf8), glob: UInt32(glob), seen: file.seen))
            identities.append((file.device, file.inode))
            order = nil
        }

        /// Puts the files in plan order (by their bytes) and keeps each path once, from the
        /// first glob that took it.
        mutating func seal() {
            guard order == nil else { return }
            let (bytes, entries) = (self.bytes, self.entries)
            let order = (0..<UInt32(entries.count)).sorted { a, b in
                let (x, y) = (entries[Int(a)], entries[Int(b)])
                return bytes.withBytes(x.path) { first in
                    bytes.withBytes(y.path) { second in
                        first.lexicographicallyPrecedes(second) || (x.glob < y.glob && first.elementsEqual(second))
                    }
                }
            }
            var kept: [UInt32] = []
            kept.reserveCapacity(order.count)
            for index in order {
                if let last = kept.last,
                    bytes.withBytes(entries[Int(last)].path, { a in bytes.withBytes(entries[Int(index)].path) { a.elementsEqual($0) } })
                {
                    continue
                }
                kept.append(index)
            }
            self.order = kept
        }

        /// File `index`'s place among those added (after ``seal()``).
        private func place(_ index: Int) -> Int { order.map { Int($0[index]) } ?? index }

        /// File `index`'s identity (after ``seal()``, before ``dropIdentities()``).
        func identity(_ index: Int) -> (device: UInt64, inode: UInt64) { identities[place(index)] }

        /// Lets the identities go, once the index of the inputs holds them.
        mutating func dropIdentities() { identities = Segments() }

        var count: Int { order?.count ?? entries.count }

        /// File `index`'s path relative to the manifest's folder (after ``seal()``).
        func relative(_ index: Int) -> String {
            bytes.withBytes(entries[place(index)].path) { String(decoding: $0, as: UTF8.self) }
        }

        /// The place of the glob that took file `index`.
        func glob(_ index: Int) -> Int { Int(entries[place(index)].glob) }

        /// What the walk's `stat` saw of file `index`.
        func seen(_ index: Int) -> SeenStamp { entries[place(index)].seen }
    }
}

/// An array that grows a segment of ``segment`` elements at a time and never moves what it
/// holds: no copy as it grows, and no block of an earlier size left behind.
struct Segments<Element> {
    /// Elements a segment: 4,096.
    static var segment: Int { 4096 }
    private var segments: [[Element]] = []
    private(set) var count = 0

    mutating func append(_ element: Element) {
        if count % Self.segment == 0 {
            segments.append([])
            segments[segments.count - 1].reserveCapacity(Self.segment)
        }
        segments[segments.count - 1].append(element)
        count += 1
    }

    subscript(index: Int) -> Element { segments[index / Self.segment][index % Self.segment] }
}

extension Segments: Sendable where Element: Sendable {}

/// Byte strings held one after another in segments of 64 KiB (a longer one in its own) that
/// never move, each found by its ``Place``.
struct ByteSegments: Sendable {
    static let segment = 1 << 16
    private var segments: [[UInt8]] = []

    /// Where a byte string is: its segment, and its start and length there.
    struct Place: Sendable {
        let segment: UInt32, start: UInt32, count: UInt32
    }

    /// Adds `bytes`, and tells where they are.
    mutating func append(_ bytes: some Collection<UInt8>) -> Place {
        let count = bytes.count
        if segments.isEmpty || segments[segments.count - 1].count + count > segments[segments.count - 1].capacity {
            segments.append([])
            segments[segments.count - 1].reserveCapacity(max(Self.segment, count))
        }
        let last = segments.count - 1
        let start = segments[last].count
        segments[last].append(contentsOf: bytes)
        return Place(segment: UInt32(last), start: UInt32(start), count: UInt32(count))
    }

    /// `body`'s answer for the bytes at `place`.
    func withBytes<T>(_ place: Place, _ body: (ArraySlice<UInt8>) -> T) -> T {
        body(segments[Int(place.segment)][Int(place.start)..<Int(place.start + place.count)])
    }
}
