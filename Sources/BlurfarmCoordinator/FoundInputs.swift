import BlurfarmState

extension JobPlanner {
    /// The files a job's input globs found, each once, in plan order: sorted by their paths'
    /// bytes, each taken by the first glob (in the manifest's order) that took it. The paths
    /// are held in one buffer of bytes: as a dictionary from path to entry, then a sorted copy
    /// of it, the 100,000 inputs of a plan took 12 MB while it planned, and two files whose
    /// names were equal strings but other bytes (`é` and `e` with a combining accent, which
    /// Swift's `==` takes for one) were one input: the second was never planned. The files'
    /// identities are held apart, until the index of the inputs takes them
    /// (``takeIdentities()``): 24 bytes a file then, and its path's.
    struct FoundInputs {
        private var bytes: [UInt8] = []
        private var entries: [Entry] = []
        private var identities: [(device: UInt64, inode: UInt64)] = []
        private var sorted = true

        private struct Entry {
            /// Where the path's bytes start in ``bytes``, and how many.
            let start: Int, count: UInt32
            /// The glob that took it, by its place among the job's input globs.
            let glob: UInt32
            /// What the walk's `stat` saw of it.
            let seen: SeenStamp
        }

        /// Adds the file at `relative`, taken by the input glob at `glob`, unless an earlier
        /// glob took it (the duplicates go when the files are put in order).
        mutating func add(_ relative: String, glob: Int, file: Stated) {
            let start = bytes.count
            bytes.append(contentsOf: relative.utf8)
            entries.append(Entry(start: start, count: UInt32(bytes.count - start), glob: UInt32(glob), seen: file.seen))
            identities.append((file.device, file.inode))
            sorted = false
        }

        /// Room for `more` files of `bytes` bytes of paths in all.
        mutating func reserve(_ more: Int, bytes count: Int) {
            entries.reserveCapacity(entries.count + more)
            identities.reserveCapacity(identities.count + more)
            bytes.reserveCapacity(bytes.count + count)
        }

        /// Puts the files in plan order (by their bytes) and keeps each path once, from the
        /// first glob that took it.
        mutating func seal() {
            guard !sorted else { return }
            let (bytes, entries) = (self.bytes, self.entries)
            func path(_ index: Int) -> ArraySlice<UInt8> {
                bytes[entries[index].start..<entries[index].start + Int(entries[index].count)]
            }
            let order = entries.indices.sorted { a, b in
                path(a).lexicographicallyPrecedes(path(b)) || (entries[a].glob < entries[b].glob && path(a).elementsEqual(path(b)))
            }
            var kept: [Int] = []
            kept.reserveCapacity(order.count)
            for index in order where kept.last.map({ !path($0).elementsEqual(path(index)) }) ?? true { kept.append(index) }
            self.entries = kept.map { entries[$0] }
            identities = kept.map { identities[$0] }
            sorted = true
        }

        /// The files' identities, in order (after ``seal()``), let go here.
        mutating func takeIdentities() -> [(device: UInt64, inode: UInt64)] {
            defer { identities = [] }
            return identities
        }

        var count: Int { entries.count }

        /// File `index`'s path relative to the manifest's folder (after ``seal()``).
        func relative(_ index: Int) -> String {
            let entry = entries[index]
            return String(decoding: bytes[entry.start..<entry.start + Int(entry.count)], as: UTF8.self)
        }

        /// The place of the glob that took file `index`.
        func glob(_ index: Int) -> Int { Int(entries[index].glob) }

        /// What the walk's `stat` saw of file `index`.
        func seen(_ index: Int) -> SeenStamp { entries[index].seen }
    }
}
