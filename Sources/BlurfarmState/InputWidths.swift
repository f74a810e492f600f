import BlurfarmSystem
import Foundation
import Synchronization

/// The widths of a job's inputs as their headers say (upright, after the EXIF orientation),
/// kept with each input's ``FileStamp`` in the job's state folder (`input-widths.json`), so that
/// planning a variant with `sizes` (which skips the sizes wider than the input) does not read
/// every input's header on every run: a width is taken from the file only while the input's
/// stamp is the recorded one, as the records trust an unchanged input (docs/scheduling.md).
/// Anything wrong with the file (missing, not a regular file, garbled, too large) means the
/// headers are read; it is a cache, never a source of truth.
public final class InputWidths: Sendable {
    /// The file's name in the job's state folder.
    public static let fileName = "input-widths.json"
    /// A file larger than this is not read (a million inputs take about 120 MB).
    package static let maximumBytes = 256 << 20

    private struct Entry: Codable {
        package var stamp: FileStamp
        package var width: Int
    }

    /// The job's state folder; nil: nothing is read or kept.
    private let folder: String?
    /// The widths known, by absolute input path, those asked this time, and whether any was
    /// read from a header.
    private let state: Mutex<(known: [String: Entry], asked: [String: Entry], changed: Bool)>

    /// Widths read from the headers, none kept.
    public init() {
        folder = nil
        state = Mutex(([:], [:], false))
    }

    /// The widths kept in the state folder `folder` (``JobStateFolder/path``), read now.
    public init(folder: String) {
        self.folder = folder
        state = Mutex((Self.read(folder) ?? [:], [:], false))
    }

    /// The width of the input at `path` (relative to the working directory): kept, when the
    /// file's stamp is the one kept with it, else `header`'s (the planner reads the file's
    /// header); nil when it has none.
    public func width(of path: String, header: (String) -> Int?) -> Int? {
        let key = RealPath.absolute(path)
        guard let stamp = FileStamp.of(path) else { return nil }
        if let kept = state.withLock({ $0.known[key] }), kept.stamp == stamp {
            state.withLock { $0.asked[key] = kept }
            return kept.width
        }
        guard let width = header(path) else { return nil }
        state.withLock {
            $0.asked[key] = Entry(stamp: stamp, width: width)
            $0.changed = true
        }
        return width
    }

    /// Writes the widths asked since the file was read (those of inputs no longer planned are
    /// dropped), atomically, when one was read from a header; creates the state folder when
    /// missing (``JobStateFolder/openFolder(_:)``).
    /// - Throws: ``StateError`` naming the file.
    public func save() throws(StateError) {
        guard let folder else { return }
        let (asked, changed) = state.withLock { ($0.asked, $0.changed) }
        guard changed else { return }
        try JobStateFolder.writeJSON(asked, named: Self.fileName, in: folder, what: "the inputs' widths")
        state.withLock {
            $0.known = asked
            $0.changed = false
        }
    }

    /// The entries of `input-widths.json` in `folder`, or nil when there is no such regular
    /// file or it cannot be read as one. Never follows a link, never waits on a FIFO.
    private static func read(_ folder: String) -> [String: Entry]? {
        JobStateFolder.readJSON([String: Entry].self, named: fileName, in: folder, maximumBytes: maximumBytes)
    }
}
