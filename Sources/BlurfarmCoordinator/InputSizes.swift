import BlurfarmState
import BlurfarmSystem
import Foundation
import Synchronization

/// The sizes of a job's inputs as their headers say (upright, after the EXIF orientation),
/// kept with each input's ``FileStamp`` in the job's records (``KeptSize``, the index's
/// `inputSize` table), so that planning a variant with `sizes` (which skips the sizes wider
/// than the input) and weighing a shard's split (``JobPlan/weights(unreadable:)``) do not read
/// every input's header on every run: a size is taken from the index only while the input's
/// stamp is the kept one, as the records trust an unchanged input (docs/scheduling.md). A
/// cache, never a source of truth: an index that cannot be read means the headers are read.
///
/// Planning looks the sizes up a batch of inputs at a time (``lookUp(_:)``) and writes
/// nothing; the sizes read from headers wait, past ``heldSizes``, in the plan's unnamed file
/// (``SpillFile``) until the run keeps them under its lock (``save(into:forgetting:)``).
/// Memory holds a batch and a hash of each input asked, whatever the job's size. The file
/// earlier versions kept the widths in (`input-widths.json`, read whole) is not read: the
/// job's first run of this version reads the headers once, and removes it.
public final class InputSizes: Sendable {
    /// The file earlier versions kept the widths in, in the job's state folder.
    public static let legacyFileName = "input-widths.json"
    /// Sizes read from headers held in memory before they go to the plan's file, as one JSON
    /// array: about 600 KB.
    package static let heldSizes = 4096

    /// An input's width and height in pixels.
    public typealias Size = (width: Int, height: Int)

    /// The kept sizes a batch of lookups found, by absolute input path.
    public struct Batch: Sendable {
        fileprivate var kept: [RealPath.Identity.Bytes: KeptSize]
        public init() { kept = [:] }
        fileprivate init(kept: [RealPath.Identity.Bytes: KeptSize]) { self.kept = kept }
    }

    /// The job's state folder (nil: nothing is read or kept), and where the sizes read from
    /// headers wait.
    private let folder: String?
    private let spill: SpillFile?
    /// The job's index opened to read, once asked (nil inside: it cannot be), until
    /// ``closeIndex()``: a plan holds no descriptor, and leaves no log behind the run's writer.
    private let index = Mutex<OutputRecords??>(nil)
    private let held: Int

    private struct State {
        /// A hash of each input asked that has a size (of its absolute path's bytes), and
        /// their number: what the job's index keeps once they are saved (a hash two inputs
        /// share keeps a stale size and costs a walk: never a wrong size, as the stamp decides).
        var asked: Set<Int> = []
        var withSize = 0
        /// Whether any size was looked up: a plan that needs none (no `sizes`, no split) asks
        /// of no input, so it cannot say which kept sizes are stale.
        var lookedUp = false
        /// Sizes to be kept: those held, and where the plan's file has the others.
        var read: [KeptSize] = []
        var spilled: [(offset: Int, bytes: Int, sizes: Int)] = []

        /// Counts the input `bytes` asked, once.
        mutating func ask(_ bytes: RealPath.Identity.Bytes) {
            if asked.insert(bytes.hashValue).inserted { withSize += 1 }
        }
    }
    private let state: Mutex<State>

    /// Sizes read from the headers, none kept.
    public init() {
        (folder, spill, held) = (nil, nil, Self.heldSizes)
        state = Mutex(State())
    }

    /// The sizes kept in the state folder `folder` (``JobStateFolder/path``), in its index,
    /// opened to read when first looked up; those read from headers wait in `spill` when given.
    public convenience init(folder: String, spill: SpillFile? = nil) {
        self.init(folder: folder, spill: spill, held: Self.heldSizes)
    }

    /// ``init(folder:spill:)``, holding `held` sizes read from headers before they go to `spill`.
    init(folder: String, spill: SpillFile?, held: Int) {
        self.folder = folder
        self.spill = spill
        self.held = held
        state = Mutex(State())
    }

    /// The kept sizes of `paths` (inputs, relative to the working directory), looked up
    /// together: the batch ``size(of:in:header:)`` takes. None when the index cannot be read.
    public func lookUp(_ paths: [String]) -> Batch {
        guard let folder else { return Batch() }
        state.withLock { $0.lookedUp = true }
        let opened = index.withLock { index -> OutputRecords? in
            if index == nil { index = .some(try? OutputRecords.reading(folder: folder)) }
            return index!
        }
        guard let opened else { return Batch() }
        return Batch(kept: (try? opened.sizes(of: paths.map(RealPath.absolute))) ?? [:])
    }

    /// Closes the index ``lookUp(_:)`` opened (a later lookup opens it again): planning and a
    /// split's weighing call it when they are done.
    public func closeIndex() {
        index.withLock { $0 = nil }
    }

    /// The size of the input at `path` (relative to the working directory): kept (in `batch`,
    /// ``lookUp(_:)``'s), when the file's stamp is the one kept with it, else `header`'s (the
    /// caller reads the file's header); nil when it has none, or is not a regular file (whose
    /// header is not read: a FIFO would wait).
    public func size(of path: String, in batch: Batch, header: (String) -> Size?) -> Size? {
        let key = RealPath.absolute(path)
        guard let stamp = FileStamp.of(path) else { return nil }
        let bytes = RealPath.Identity.Bytes(key)
        if let kept = batch.kept[bytes], kept.stamp == stamp {
            state.withLock { $0.ask(bytes) }
            return (kept.width, kept.height)
        }
        guard let size = header(path) else { return nil }
        let read = KeptSize(input: key, stamp: stamp, width: size.width, height: size.height)
        let full = state.withLock { state -> [KeptSize]? in
            state.ask(bytes)
            state.read.append(read)
            guard spill != nil, state.read.count >= held else { return nil }
            defer { state.read.removeAll(keepingCapacity: true) }
            return state.read
        }
        if let full { hold(full) }
        return size
    }

    /// How many sizes read from headers wait to be kept: in memory, and in the plan's file.
    var waiting: (held: Int, spilled: Int) {
        state.withLock { ($0.read.count, $0.spilled.reduce(0) { $0 + $1.sizes }) }
    }

    /// `sizes` written to the plan's file (kept in memory where it cannot be written).
    private func hold(_ sizes: [KeptSize]) {
        guard let bytes = try? JSONEncoder().encode(sizes), let offset = spill?.append(Array(bytes)) else {
            state.withLock { $0.read.append(contentsOf: sizes) }
            return
        }
        state.withLock { $0.spilled.append((offset, bytes.count, sizes.count)) }
    }

    /// Keeps the sizes read from headers in the job's own records, in `job`, unless a run holds
    /// the job's lock (taken without waiting, and let go at once): what `slurm submit` does,
    /// which plans on the login node and holds no lock, so that its array tasks, each planning
    /// the whole job, and its finisher do not read every input's header again. Forgets none.
    /// Whether they were kept (false: a run holds the lock, and keeps its own).
    /// - Throws: ``StateError`` naming the lock or the index.
    public func keepUnlessLocked(in job: JobStateFolder) throws(StateError) -> Bool {
        guard case .acquired(let lock) = try JobLock.acquire(job.lockPath, wait: false) else { return false }
        try withExtendedLifetime(lock) { () throws(StateError) in try save(into: try OutputRecords(folder: job.path), forgetting: false) }
        return true
    }

    /// Keeps the sizes read from headers in `records`, the index the run writes (the job's, or
    /// a shard's), in one transaction. With `forgetting` (the job's own index), the file of
    /// earlier versions is removed, and, when sizes were looked up (the plan needed them), the
    /// sizes of inputs not asked this time are forgotten too. Nothing is written when nothing
    /// changed.
    /// - Throws: ``StateError`` naming the file that cannot be read or written.
    public func save(into records: OutputRecords, forgetting: Bool) throws(StateError) {
        guard let folder else { return }
        let (inMemory, spilled, asked, expected, lookedUp) = state.withLock {
            ($0.read, $0.spilled, $0.asked, $0.withSize, $0.lookedUp)
        }
        let forgets = forgetting && lookedUp
        if inMemory.isEmpty, spilled.isEmpty, !forgets || records.sizeCount == expected {
            return try removeLegacyFile(in: folder, if: forgetting)
        }
        var next = 0
        try records.keepSizes(
            { () throws(StateError) -> [KeptSize]? in
                defer { next += 1 }
                if next < spilled.count {
                    do {
                        let bytes = try spill?.bytes(spilled[next].bytes, at: spilled[next].offset) ?? []
                        return try JSONDecoder().decode([KeptSize].self, from: Data(bytes))
                    } catch {
                        throw StateError(path: records.path, message: "cannot read back the inputs' sizes: \(error)")
                    }
                }
                return next == spilled.count ? inMemory : nil
            }, forgettingAllBut: forgets ? { asked.contains(RealPath.Identity.Bytes($0).hashValue) } : nil,
            expected: expected)
        state.withLock {
            $0.read = []
            $0.spilled = []
        }
        try removeLegacyFile(in: folder, if: forgetting)
    }

    /// Removes the widths' file of earlier versions from `folder`, if there and `removing`.
    private func removeLegacyFile(in folder: String, if removing: Bool) throws(StateError) {
        let path = (folder as NSString).appendingPathComponent(Self.legacyFileName)
        guard removing, Syscalls.linkStatus(path) != nil else { return }
        do throws(SystemCallError) {
            try Syscalls.removeFile(path)
        } catch {
            throw StateError(path: path, message: "cannot remove the widths' file of an earlier version: \(error.reason)")
        }
    }
}
