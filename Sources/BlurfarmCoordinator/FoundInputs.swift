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
    /// (``identity(_:)``, ``dropIdentities()``). Each file's folder is held once, its name
    /// apart (a million files' paths took 22 MB, their names 12). About 28 bytes a file and
    /// its name once the identities are gone, 44 before.
    struct FoundInputs {
        /// The files' names (the last part of their paths).
        private var names = ByteSegments()
        /// The folders the files are in, each held once (a walk finds a folder's files one
        /// after another), with a slash at the end ("" for the manifest's own folder).
        private var folders: [[UInt8]] = []
        private var folderIndex: [[UInt8]: UInt32] = [:]
        private var entries = Segments<Entry>()
        private var identities = Segments<(device: UInt64, inode: UInt64)>()
        /// The entries in plan order, once sealed (nil: not sealed since the last file added).
        private var order: [UInt32]?

        private struct Entry {
            /// Where the name's bytes are in ``names``.
            let name: ByteSegments.Place
            /// Its folder's place in ``folders``.
            let folder: UInt32
            /// The glob that took it, by its place among the job's input globs.
            let glob: UInt32
            /// What the walk's `stat` saw of it.
            let seen: SeenStamp
        }

        /// Adds the file at `relative`, taken by the input glob at `glob`, unless an earlier
        /// glob took it (the duplicates go when the files are put in order).
        mutating func add(_ relative: String, glob: Int, file: Stated) {
            let bytes = relative.utf8
            // Its folder, to the last slash: a name is at most 255 bytes (a longer part, from
            // no walk, is cut where a name's place can hold it).
            let slash = bytes.lastIndex(of: UInt8(ascii: "/")).map { bytes.index(after: $0) } ?? bytes.startIndex
            let cut = max(slash, bytes.index(bytes.endIndex, offsetBy: -min(bytes.count, ByteSegments.longest)))
            let folder: UInt32
            if let last = folders.indices.last, folders[last].elementsEqual(bytes[..<cut]) {
                folder = UInt32(last)
            } else if let known = folderIndex[Array(bytes[..<cut])] {
                folder = known
            } else {
                folder = UInt32(folders.count)
                folders.append(Array(bytes[..<cut]))
                folderIndex[folders[Int(folder)]] = folder
            }
            entries.append(Entry(name: names.append(bytes[cut...]), folder: folder, glob: UInt32(glob), seen: file.seen))
            identities.append((file.device, file.inode))
            order = nil
        }

        /// Whether `x`'s path comes before `y`'s in their bytes' order (-1), is it (0), or
        /// comes after (1): its folder's bytes and its name's as one string. Static, given the
        /// names and folders alone, and read as spans: a sort's comparison that took the whole
        /// value, and slices of it, retained each of its parts (a million files planned 6%
        /// slower).
        private static func compare(_ x: Entry, _ y: Entry, _ names: ByteSegments, _ folders: [[UInt8]]) -> Int {
            names.withSpan(x.name) { xName in
                names.withSpan(y.name) { yName in
                    if x.folder == y.folder { return compare(xName, yName) }
                    let (xBytes, yBytes) = (folders[Int(x.folder)], folders[Int(y.folder)])
                    let (xFolder, yFolder) = (xBytes.span, yBytes.span)
                    let common = min(xFolder.count, yFolder.count)
                    for index in 0..<common where xFolder[index] != yFolder[index] { return xFolder[index] < yFolder[index] ? -1 : 1 }
                    // One folder begins the other: the shorter's name goes on against the rest.
                    return xFolder.count < yFolder.count
                        ? compare(xName, yFolder.extracting(common...), then: yName)
                        : xFolder.count > yFolder.count
                            ? -compare(yName, xFolder.extracting(common...), then: xName) : compare(xName, yName)
                }
            }
        }

        /// `a`'s order against `b`'s: -1 before, 0 the same, 1 after.
        private static func compare(_ a: Span<UInt8>, _ b: Span<UInt8>) -> Int {
            for index in 0..<min(a.count, b.count) where a[index] != b[index] { return a[index] < b[index] ? -1 : 1 }
            return a.count == b.count ? 0 : a.count < b.count ? -1 : 1
        }

        /// `a`'s order against `b` and `c` as one string.
        private static func compare(_ a: Span<UInt8>, _ b: Span<UInt8>, then c: Span<UInt8>) -> Int {
            let order = compare(a.extracting(first: b.count), b)
            return order != 0 ? order : compare(a.extracting(droppingFirst: b.count), c)
        }

        /// Puts the files in plan order (by their bytes) and keeps each path once, from the
        /// first glob that took it.
        mutating func seal() {
            guard order == nil else { return }
            let (entries, names, folders) = (self.entries, self.names, self.folders)
            let order = (0..<UInt32(entries.count)).sorted { a, b in
                let (x, y) = (entries[Int(a)], entries[Int(b)])
                let order = Self.compare(x, y, names, folders)
                return order < 0 || (order == 0 && x.glob < y.glob)
            }
            var kept: [UInt32] = []
            kept.reserveCapacity(order.count)
            for index in order {
                if let last = kept.last, Self.compare(entries[Int(last)], entries[Int(index)], names, folders) == 0 { continue }
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
            let entry = entries[place(index)]
            var path = folders[Int(entry.folder)]
            names.withSpan(entry.name) { name in
                path.reserveCapacity(path.count + name.count)
                for index in name.indices { path.append(name[index]) }
            }
            return String(decoding: path, as: UTF8.self)
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

/// Byte strings of at most ``longest`` bytes held one after another in segments of 64 KiB
/// that never move, each found by its ``Place`` (8 bytes).
struct ByteSegments: Sendable {
    static let segment = 1 << 16
    /// The longest string held: a segment's.
    static let longest = segment - 1
    private var segments: [[UInt8]] = []

    /// Where a byte string is: its segment, and its start and length there.
    struct Place: Sendable {
        let segment: UInt32, start: UInt16, count: UInt16
    }

    /// Adds `bytes` (at most ``longest``), and tells where they are.
    mutating func append(_ bytes: some Collection<UInt8>) -> Place {
        let count = bytes.count
        precondition(count <= Self.longest, "a string a segment can hold")
        if segments.isEmpty || segments[segments.count - 1].count + count > Self.segment {
            segments.append([])
            segments[segments.count - 1].reserveCapacity(Self.segment)
        }
        let last = segments.count - 1
        let start = segments[last].count
        segments[last].append(contentsOf: bytes)
        return Place(segment: UInt32(last), start: UInt16(start), count: UInt16(count))
    }

    /// `body`'s answer for the bytes at `place`.
    func withSpan<T>(_ place: Place, _ body: (Span<UInt8>) -> T) -> T {
        let segment = segments[Int(place.segment)]
        return body(segment.span.extracting(Int(place.start)..<Int(place.start) + Int(place.count)))
    }
}
