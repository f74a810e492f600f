import BlurfarmState
import BlurfarmSystem
import Foundation
import Synchronization

/// The widths of a job's inputs as their headers say (upright, after the EXIF orientation),
/// kept with each input's ``FileStamp`` in the job's records (``KeptWidth``, the index's
/// `inputWidth` table), so that planning a variant with `sizes` (which skips the sizes wider
/// than the input) does not read every input's header on every run: a width is taken from the
/// index only while the input's stamp is the kept one, as the records trust an unchanged input
/// (docs/scheduling.md). A cache, never a source of truth: an index that cannot be read means
/// the headers are read.
///
/// Planning looks the widths up a batch of inputs at a time (``lookUp(_:)``) and writes
/// nothing; the widths it read from headers wait, past ``heldWidths`` in the plan's unnamed
/// file (``SpillFile``), until the run keeps them under the job's lock (``save(into:forgetting:)``).
/// Memory holds a batch and a hash of each input asked, whatever the job's size. The file
/// earlier versions kept (`input-widths.json`, read whole) is read while it is there, and the
/// first run that keeps the widths in the job's own index moves what it asked of it there and
/// removes it.
public final class InputWidths: Sendable {
    /// The file earlier versions kept the widths in, in the job's state folder.
    public static let legacyFileName = "input-widths.json"
    /// A legacy file larger than this is not read (a million inputs took about 120 MB).
    package static let maximumBytes = 256 << 20
    /// Widths read from headers held in memory before they go to the plan's file, as one
    /// JSON array: about 600 KB.
    package static let heldWidths = 4096

    /// A legacy file's entry, by absolute input path.
    private struct LegacyEntry: Codable {
        var stamp: FileStamp
        var width: Int
    }

    /// The kept widths a batch of lookups found, by absolute input path.
    public struct Batch: Sendable {
        fileprivate var kept: [RealPath.Identity.Bytes: KeptWidth]
        public init() { kept = [:] }
        fileprivate init(kept: [RealPath.Identity.Bytes: KeptWidth]) { self.kept = kept }
    }

    /// The job's state folder (nil: nothing is read or kept), its index opened to read, and
    /// where the widths read from headers wait.
    private let folder: String?
    private let index: OutputRecords?
    private let spill: SpillFile?
    private let held: Int

    private struct State {
        /// The legacy file's entries, until the widths are kept.
        var legacy: [String: LegacyEntry] = [:]
        /// A hash of each input asked that has a width (of its absolute path's bytes), and
        /// their number: what the job's index keeps once they are saved (a hash two inputs
        /// share keeps a stale width, and costs a walk: never a wrong width, as the stamp decides).
        var asked: Set<Int> = []
        var withWidth = 0
        /// Widths to be kept: those held, and where the plan's file has the others.
        var read: [KeptWidth] = []
        var spilled: [(offset: Int, bytes: Int, widths: Int)] = []

        /// Counts the input `bytes` asked, once.
        mutating func ask(_ bytes: RealPath.Identity.Bytes) {
            if asked.insert(bytes.hashValue).inserted { withWidth += 1 }
        }
    }
    private let state: Mutex<State>

    /// Widths read from the headers, none kept.
    public init() {
        (folder, index, spill, held) = (nil, nil, nil, Self.heldWidths)
        state = Mutex(State())
    }

    /// The widths kept in the state folder `folder` (``JobStateFolder/path``): its index,
    /// opened to read now, and a legacy file, read whole now if there is one; those read from
    /// headers wait in `spill` when given.
    public convenience init(folder: String, spill: SpillFile? = nil) {
        self.init(folder: folder, spill: spill, held: Self.heldWidths)
    }

    /// ``init(folder:spill:)``, holding `held` widths read from headers before they go to `spill`.
    init(folder: String, spill: SpillFile?, held: Int) {
        self.folder = folder
        self.spill = spill
        self.held = held
        index = try? OutputRecords.reading(folder: folder)
        var state = State()
        state.legacy =
            JobStateFolder.readJSON([String: LegacyEntry].self, named: Self.legacyFileName, in: folder, maximumBytes: Self.maximumBytes)
            ?? [:]
        self.state = Mutex(state)
    }

    /// The kept widths of `paths` (inputs, relative to the working directory), looked up
    /// together: the batch ``width(of:in:header:)`` takes. None when the index cannot be read.
    public func lookUp(_ paths: [String]) -> Batch {
        guard let index else { return Batch() }
        return Batch(kept: (try? index.widths(of: paths.map(RealPath.absolute))) ?? [:])
    }

    /// The width of the input at `path` (relative to the working directory): kept (in `batch`,
    /// ``lookUp(_:)``'s, or the legacy file), when the file's stamp is the one kept with it,
    /// else `header`'s (the planner reads the file's header); nil when it has none.
    public func width(of path: String, in batch: Batch, header: (String) -> Int?) -> Int? {
        let key = RealPath.absolute(path)
        guard let stamp = FileStamp.of(path) else { return nil }
        let bytes = RealPath.Identity.Bytes(key)
        if let kept = batch.kept[bytes], kept.stamp == stamp {
            state.withLock { $0.ask(bytes) }
            return kept.width
        }
        let legacy = state.withLock { $0.legacy[key] }.flatMap { $0.stamp == stamp ? $0.width : nil }
        guard let width = legacy ?? header(path) else { return nil }
        let read = KeptWidth(input: key, stamp: stamp, width: width)
        let full = state.withLock { state -> [KeptWidth]? in
            state.ask(bytes)
            state.read.append(read)
            guard spill != nil, state.read.count >= held else { return nil }
            defer { state.read.removeAll(keepingCapacity: true) }
            return state.read
        }
        if let full { hold(full) }
        return width
    }

    /// How many widths read from headers wait to be kept: in memory, and in the plan's file.
    var waiting: (held: Int, spilled: Int) {
        state.withLock { ($0.read.count, $0.spilled.reduce(0) { $0 + $1.widths }) }
    }

    /// `widths` written to the plan's file (kept in memory where it cannot be written).
    private func hold(_ widths: [KeptWidth]) {
        guard let bytes = try? JSONEncoder().encode(widths), let offset = spill?.append(Array(bytes)) else {
            state.withLock { $0.read.append(contentsOf: widths) }
            return
        }
        state.withLock { $0.spilled.append((offset, bytes.count, widths.count)) }
    }

    /// Keeps the widths read from headers (and from a legacy file) in `records`, the index the
    /// run writes (the job's, or a shard's), in one transaction. With `forgetting` (the job's
    /// own index), the widths of inputs not asked this time are forgotten too, and a legacy
    /// file is removed. Nothing is written when nothing changed.
    /// - Throws: ``StateError`` naming the file that cannot be read or written.
    public func save(into records: OutputRecords, forgetting: Bool) throws(StateError) {
        guard let folder else { return }
        let (inMemory, spilled, asked, expected) = state.withLock { ($0.read, $0.spilled, $0.asked, $0.withWidth) }
        let legacyPath = (folder as NSString).appendingPathComponent(Self.legacyFileName)
        let legacyThere = forgetting && Syscalls.linkStatus(legacyPath) != nil
        if inMemory.isEmpty, spilled.isEmpty, !legacyThere, !forgetting || records.widthCount == expected { return }
        var next = 0
        try records.keepWidths(
            { () throws(StateError) -> [KeptWidth]? in
                defer { next += 1 }
                if next < spilled.count {
                    do {
                        let bytes = try spill?.bytes(spilled[next].bytes, at: spilled[next].offset) ?? []
                        return try JSONDecoder().decode([KeptWidth].self, from: Data(bytes))
                    } catch {
                        throw StateError(path: records.path, message: "cannot read back the inputs' widths: \(error)")
                    }
                }
                return next == spilled.count ? inMemory : nil
            }, forgettingAllBut: forgetting ? { asked.contains(RealPath.Identity.Bytes($0).hashValue) } : nil,
            expected: expected)
        state.withLock {
            $0.read = []
            $0.spilled = []
            $0.legacy = [:]
        }
        guard legacyThere else { return }
        do throws(SystemCallError) {
            try Syscalls.removeFile(legacyPath)
        } catch {
            throw StateError(path: legacyPath, message: "moved into \(OutputRecords.fileName), but cannot remove: \(error.reason)")
        }
    }
}
