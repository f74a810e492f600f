extension JobPlanner {
    /// The files a job's input globs found, each once, in plan order: sorted by their paths'
    /// bytes, each taken by the first glob (in the manifest's order) that took it. The paths
    /// are held in one buffer of bytes: as a dictionary from path to entry, then a sorted copy
    /// of it, the 100,000 inputs of a plan took 12 MB while it planned, and two files whose
    /// names were equal strings but other bytes (`é` and `e` with a combining accent, which
    /// Swift's `==` takes for one) were one input: the second was never planned.
    struct FoundInputs {
        private var bytes: [UInt8] = []
        private var entries: [Entry] = []
        private var sorted = true

        private struct Entry {
            /// Where the path's bytes start in ``bytes``, and how many.
            let start: Int, count: UInt32
            /// The glob that took it, by its place among the job's input globs.
            let glob: UInt32
            let file: Stated
        }

        /// Adds the file at `relative`, taken by the input glob at `glob`, unless an earlier
        /// glob took it (the duplicates go when the files are put in order).
        mutating func add(_ relative: String, glob: Int, file: Stated) {
            let start = bytes.count
            bytes.append(contentsOf: relative.utf8)
            entries.append(Entry(start: start, count: UInt32(bytes.count - start), glob: UInt32(glob), file: file))
            sorted = false
        }

        /// Room for `more` files of `bytes` bytes of paths in all.
        mutating func reserve(_ more: Int, bytes count: Int) {
            entries.reserveCapacity(entries.count + more)
            bytes.reserveCapacity(bytes.count + count)
        }

        /// Puts the files in plan order (by their bytes) and keeps each path once, from the
        /// first glob that took it.
        mutating func seal() {
            guard !sorted else { return }
            let bytes = self.bytes
            entries.sort { a, b in
                let order = bytes[a.start..<a.start + Int(a.count)].lexicographicallyPrecedes(bytes[b.start..<b.start + Int(b.count)])
                if order { return true }
                return a.glob < b.glob && bytes[a.start..<a.start + Int(a.count)].elementsEqual(bytes[b.start..<b.start + Int(b.count)])
            }
            var kept: [Entry] = []
            kept.reserveCapacity(entries.count)
            for entry in entries {
                if let last = kept.last, Int(last.count) == Int(entry.count),
                    bytes[last.start..<last.start + Int(last.count)].elementsEqual(bytes[entry.start..<entry.start + Int(entry.count)])
                {
                    continue
                }
                kept.append(entry)
            }
            entries = kept
            sorted = true
        }

        var count: Int { entries.count }

        /// File `index`'s path relative to the manifest's folder (after ``seal()``).
        func relative(_ index: Int) -> String {
            let entry = entries[index]
            return String(decoding: bytes[entry.start..<entry.start + Int(entry.count)], as: UTF8.self)
        }

        /// The place of the glob that took file `index`.
        func glob(_ index: Int) -> Int { Int(entries[index].glob) }

        /// What the walk's `stat` said of file `index`.
        func file(_ index: Int) -> Stated { entries[index].file }
    }
}
