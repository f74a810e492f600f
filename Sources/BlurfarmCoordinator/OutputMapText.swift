import BlurfarmImageIO
import BlurfarmState
import BlurfarmSystem
import Foundation

/// The output map's JSON, the bytes ``RunReport/json(_:)`` makes of the whole ``OutputMap``
/// and a newline, made an input at a time: each input's entry encoded alone and set in the
/// map's frame (``JSONFrame``). The bytes go to an unnamed file (``SpillFile``) as they come,
/// and are compared with the file at the map's path, read as far as they go: a map of 100,000
/// inputs (173 MB, with its placeholders) was held whole, encoded whole, and the file read
/// whole to compare, 1.2 GB, on every run of a site build, changed or not.
/// `OutputMapTextTests`: the same bytes as the map encoded whole.
final class OutputMapText {
    /// The map's frame, its inputs set in as they come (one encoder for all: made an entry
    /// each, it was a tenth of the map's time).
    private var frame: JSONFrame
    private let spill: SpillFile
    /// The bytes made, in order: in the unnamed file, or held where it could not take them.
    private var pieces: [Piece] = []
    /// The bytes not yet handed on (at most ``JSONFrame/partBytes`` and an entry).
    private var pending: [UInt8] = []
    private var length = 0
    /// Whether the frame's list of inputs is open (its first entry is in).
    private var listOpen = false
    /// The file at the map's path, while its bytes are these so far (nil: it is not there, is
    /// not a regular file, or differs).
    private var existing: Int32?

    private enum Piece {
        case spilled(offset: Int, count: Int)
        case held([UInt8])
    }

    /// A map of the job `job`, compared with the regular file at `path` (opened without
    /// waiting: a FIFO there is not a map, and is replaced; beneath the roots of `confinement`
    /// when given), its bytes kept in an unnamed file in `folder` (the job's state folder:
    /// the system's temporary folder, often memory, comes after it).
    /// - Throws: what the encoder throws.
    init(job: String, comparedWith path: String, confinement: RootConfinement?, keptIn folder: String?) throws {
        frame = try JSONFrame(OutputMap(job: job, inputs: []), lists: "inputs")
        spill = SpillFile(in: SpillFile.folders(preferring: folder))
        existing = Self.open(path, confinement: confinement)?.file
    }

    /// The stamp of the regular file at the map's path `path` (beneath the roots of
    /// `confinement` when given), or nil when there is none: what ``OutputMapStamp`` compares.
    static func stamp(ofFileAt path: String, confinement: RootConfinement?) -> FileStamp? {
        guard let (file, info) = open(path, confinement: confinement) else { return nil }
        Syscalls.close(file)
        return FileStamp(info)
    }

    /// The regular file at `path`, opened to read without waiting (a FIFO there is not a map),
    /// and its status; nil when there is none.
    private static func open(_ path: String, confinement: RootConfinement?) -> (file: Int32, info: stat)? {
        let opened: Int32? = confinement.map { try? $0.openFile(path) } ?? (try? Syscalls.openForReading(path))
        guard let opened else { return nil }
        if let info = try? Syscalls.status(of: opened), info.st_mode & S_IFMT == S_IFREG { return (opened, info) }
        Syscalls.close(opened)
        return nil
    }

    deinit { if let existing { Syscalls.close(existing) } }

    /// Adds `input`'s entry.
    /// - Throws: what the encoder throws.
    func add(_ input: OutputMap.Input) throws {
        if !listOpen {
            take(frame.openList())
            listOpen = true
        }
        take(try frame.element(input))
    }

    /// Ends the map: whether the file at its path holds these bytes already.
    func finish() -> Bool {
        if !listOpen { take(frame.openList()) }
        take(frame.closeList() + frame.finish() + Array("\n".utf8))
        handOn()
        guard let existing else { return false }
        // Not one byte more.
        return (try? Syscalls.readBytes(existing, count: 1, at: length))?.isEmpty ?? false
    }

    /// The bytes, a piece at a time, then nil (after ``finish()``).
    /// - Throws: ``ImageIOError`` when the unnamed file cannot be read back.
    func parts(path: String) -> () throws(ImageIOError) -> [UInt8]? {
        var next = 0
        return { [self] () throws(ImageIOError) -> [UInt8]? in
            guard next < pieces.count else { return nil }
            defer { next += 1 }
            switch pieces[next] {
            case .held(let bytes): return bytes
            case .spilled(let offset, let count):
                do throws(SystemCallError) {
                    return try spill.bytes(count, at: offset)
                } catch {
                    throw ImageIOError(code: .writeFailed, path: path, message: "the map's bytes cannot be read back: \(error.reason)")
                }
            }
        }
    }

    private func take(_ bytes: [UInt8]) {
        pending += bytes
        if pending.count >= JSONFrame.partBytes { handOn() }
    }

    /// Compares the pending bytes with the file's at their place, and keeps them.
    private func handOn() {
        guard !pending.isEmpty else { return }
        if let file = existing, (try? Syscalls.readBytes(file, count: pending.count, at: length)) != pending {
            Syscalls.close(file)
            existing = nil
        }
        if let offset = spill.append(pending) {
            pieces.append(.spilled(offset: offset, count: pending.count))
        } else {
            pieces.append(.held(pending))
        }
        length += pending.count
        pending.removeAll(keepingCapacity: true)
    }
}
