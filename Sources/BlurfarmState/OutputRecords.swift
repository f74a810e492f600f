import BlurfarmSystem
import Foundation
import Synchronization

/// The records of the outputs one job wrote, of the output folders it created and of the inputs
/// that failed through their own fault (``InputFailure``), kept in its state folder as
/// `records.jsonl`: one JSON line per event (an output, a created folder or a failed input
/// recorded, a record removed), appended and flushed to disk as
/// it happens, so a run that is killed loses no record of what it finished. A torn last line
/// (the process died while appending) is ignored. ``compact()`` rewrites the file with one line
/// per live record, atomically. Safe to call from several threads; one process at a time
/// (the job's ``JobLock``) writes a job's records.
public final class OutputRecords: Sendable {
    /// The records file.
    public let path: String

    private struct State {
        package var records: [String: OutputRecord]
        package var folders: [String: CreatedFolder]
        package var failures: [String: InputFailure]
        package var placeholders: [String: InputPlaceholder]
        /// The records file, open to append.
        package var descriptor: Int32
        /// The folder holding it, for `openat` and `renameat`.
        package let folder: Int32
        /// Lines in the file: when there are as many as records, it is compact already.
        package var lines: Int
        package var live: Int { records.count + folders.count + failures.count + placeholders.count }
    }

    private let state: Mutex<State>

    /// One line of the file: a record, the output path of a removed record, a created folder,
    /// the path of a created folder whose record was removed, a failed input, the input path
    /// of a failure forgotten, an input's placeholder, or the input path of one forgotten.
    /// Readers that know fewer kinds skip the lines of the others (every field is optional).
    private struct Line: Codable {
        package var record: OutputRecord?
        package var removed: String?
        package var folder: CreatedFolder?
        package var removedFolder: String?
        package var failure: InputFailure?
        package var removedFailure: String?
        package var placeholder: InputPlaceholder?
        package var removedPlaceholder: String?
    }

    /// What a records file holds, read without changing anything (``read(folder:)``).
    public struct Contents: Sendable {
        /// The output records, by absolute output path.
        public var records: [String: OutputRecord] = [:]
        /// The created folders, by absolute path.
        public var folders: [String: CreatedFolder] = [:]
        /// The inputs that failed, by absolute input path.
        public var failures: [String: InputFailure] = [:]
        /// The inputs' placeholders, by absolute input path.
        public var placeholders: [String: InputPlaceholder] = [:]

        package init(
            records: [String: OutputRecord] = [:], folders: [String: CreatedFolder] = [:],
            failures: [String: InputFailure] = [:], placeholders: [String: InputPlaceholder] = [:]
        ) {
            (self.records, self.folders, self.failures, self.placeholders) = (records, folders, failures, placeholders)
        }
    }

    /// Opens (creating if need be) the records file `records.jsonl` in `folder`, creating the
    /// folder too, and reads it. The file is opened in the folder's descriptor, never through a
    /// symbolic link, and the folder must not be one (``JobStateFolder/openFolder(_:)``).
    /// - Throws: ``StateError`` naming the file when it cannot be created, read or appended to,
    ///   is a link, or when a line other than the last is not a record.
    public init(folder: String) throws(StateError) {
        let folderDescriptor = try JobStateFolder.openFolder(folder)
        let path = (folder as NSString).appendingPathComponent("records.jsonl")
        self.path = path
        let fd: Int32
        do {
            fd = try Self.open(in: folderDescriptor, path: path, flags: O_RDWR | O_CREAT | O_APPEND)
            let (contents, lines) = try Self.read(fd, path: path, cutTornLine: true)
            state = Mutex(
                State(
                    records: contents.records, folders: contents.folders, failures: contents.failures,
                    placeholders: contents.placeholders, descriptor: fd,
                    folder: folderDescriptor, lines: lines))
        } catch {
            Syscalls.close(folderDescriptor)
            throw error
        }
    }

    deinit {
        state.withLock {
            Syscalls.close($0.descriptor)
            Syscalls.close($0.folder)
        }
    }

    /// Opens `records.jsonl` (or its temporary copy) in `folder` without following a link: a
    /// link there is refused with a line that says so.
    private static func open(in folder: Int32, path: String, flags: Int32) throws(StateError) -> Int32 {
        do {
            return try Syscalls.openFile((path as NSString).lastPathComponent, in: folder, flags: flags)
        } catch where error.errno == ELOOP {
            throw StateError(path: path, message: "is a symbolic link: refusing to use it as the records (remove it)")
        } catch where error.errno == EEXIST {
            throw StateError(path: path, message: "exists already")
        } catch {
            throw StateError(path: path, message: "cannot open: \(error.reason)")
        }
    }

    /// The records in `records.jsonl` in `folder`, read only: nothing is created, repaired or
    /// locked (`check --status`). A folder or file that does not exist holds no records.
    /// - Throws: ``StateError`` when the file cannot be read, is a link, or a line other than the
    ///   last is not a record.
    public static func read(folder: String) throws(StateError) -> Contents {
        let path = (folder as NSString).appendingPathComponent("records.jsonl")
        let folderDescriptor: Int32
        do {
            folderDescriptor = try Syscalls.openFolder(folder)
        } catch where error.errno == ENOENT {
            return Contents()
        } catch {
            throw StateError(path: folder, message: "cannot open: \(error.reason)")
        }
        defer { Syscalls.close(folderDescriptor) }
        let fd: Int32
        do {
            fd = try Syscalls.openFile("records.jsonl", in: folderDescriptor, flags: O_RDONLY)
        } catch where error.errno == ENOENT {
            return Contents()
        } catch where error.errno == ELOOP {
            throw StateError(path: path, message: "is a symbolic link: refusing to use it as the records (remove it)")
        } catch {
            throw StateError(path: path, message: "cannot open: \(error.reason)")
        }
        defer { Syscalls.close(fd) }
        return try read(fd, path: path, cutTornLine: false).contents
    }

    /// The records, created folders and failures in the open file `fd`, and the number of its
    /// lines; a torn last line is cut off the file when `cutTornLine`.
    private static func read(
        _ fd: Int32, path: String, cutTornLine: Bool
    ) throws(StateError) -> (contents: Contents, lines: Int) {
        let data: Data
        do {
            data = Data(try Syscalls.readAll(fd))
        } catch {
            throw StateError(path: path, message: "cannot read: \(error.reason)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var contents = Contents()
        var count = 0
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (number, line) in lines.enumerated() where !line.isEmpty {
            guard let entry = try? decoder.decode(Line.self, from: Data(line)) else {
                // Only the last line may be torn: the process that appended it died.
                if number == lines.count - 1 { break }
                throw StateError(path: path, message: "line \(number + 1) is not a record (remove the file to start afresh)")
            }
            if let record = entry.record { contents.records[record.output] = record }
            if let removed = entry.removed { contents.records[removed] = nil }
            if let folder = entry.folder { contents.folders[folder.path] = folder }
            if let removed = entry.removedFolder { contents.folders[removed] = nil }
            if let failure = entry.failure { contents.failures[failure.input] = failure }
            if let removed = entry.removedFailure { contents.failures[removed] = nil }
            if let placeholder = entry.placeholder { contents.placeholders[placeholder.input] = placeholder }
            if let removed = entry.removedPlaceholder { contents.placeholders[removed] = nil }
            count += 1
        }
        // A torn last line (no newline after it) is cut off, so that the next line appended
        // starts on a line of its own.
        let end = data.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        if end < data.count, cutTornLine {
            do {
                try Syscalls.truncate(fd, to: end)
            } catch {
                throw StateError(path: path, message: "cannot cut off a torn last line: \(error.reason)")
            }
            return (contents, -1)  // whatever the cut-off text held, the next compaction rewrites the file
        }
        return (contents, count)
    }

    /// The record of the output at the absolute path `output`, if any.
    public func record(for output: String) -> OutputRecord? {
        state.withLock { $0.records[output] }
    }

    /// Every record, in output path order.
    public var all: [OutputRecord] {
        state.withLock { $0.records.values.sorted { $0.output < $1.output } }
    }

    /// Records `record` (replacing any record of the same output) and flushes it to disk.
    public func add(_ record: OutputRecord) throws(StateError) {
        try append(Line(record: record)) { $0.records[record.output] = record }
    }

    /// Removes the record of `output` and flushes that to disk.
    public func remove(output: String) throws(StateError) {
        try append(Line(removed: output)) { $0.records[output] = nil }
    }

    /// Every folder recorded as created, in path order.
    public var folders: [CreatedFolder] {
        state.withLock { $0.folders.values.sorted { $0.path < $1.path } }
    }

    /// Records that blurfarm created `folder` and flushes it to disk.
    public func add(_ folder: CreatedFolder) throws(StateError) {
        try append(Line(folder: folder)) { $0.folders[folder.path] = folder }
    }

    /// Removes the record of the created folder at `path` and flushes that to disk.
    public func remove(folder path: String) throws(StateError) {
        try append(Line(removedFolder: path)) { $0.folders[path] = nil }
    }

    /// The remembered failure of the input at the absolute path `input`, if any.
    public func failure(for input: String) -> InputFailure? {
        state.withLock { $0.failures[input] }
    }

    /// Every remembered failure, in input path order.
    public var failures: [InputFailure] {
        state.withLock { $0.failures.values.sorted { $0.input < $1.input } }
    }

    /// Remembers `failure` (replacing any of the same input) and flushes it to disk.
    public func add(_ failure: InputFailure) throws(StateError) {
        try append(Line(failure: failure)) { $0.failures[failure.input] = failure }
    }

    /// Forgets the failure of `input` and flushes that to disk.
    public func remove(failure input: String) throws(StateError) {
        try append(Line(removedFailure: input)) { $0.failures[input] = nil }
    }

    /// The placeholder of the input at the absolute path `input`, if any.
    public func placeholder(for input: String) -> InputPlaceholder? {
        state.withLock { $0.placeholders[input] }
    }

    /// Every placeholder, in input path order.
    public var placeholders: [InputPlaceholder] {
        state.withLock { $0.placeholders.values.sorted { $0.input < $1.input } }
    }

    /// Keeps `placeholder` (replacing any of the same input) and flushes it to disk.
    public func add(_ placeholder: InputPlaceholder) throws(StateError) {
        try append(Line(placeholder: placeholder)) { $0.placeholders[placeholder.input] = placeholder }
    }

    /// Forgets the placeholder of `input` and flushes that to disk.
    public func remove(placeholder input: String) throws(StateError) {
        try append(Line(removedPlaceholder: input)) { $0.placeholders[input] = nil }
    }

    private func append(_ line: Line, apply: (inout State) -> Void) throws(StateError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let bytes: [UInt8]
        do {
            bytes = Array(try encoder.encode(line) + Data("\n".utf8))
        } catch {
            throw StateError(path: path, message: "cannot encode a record: \(error)")
        }
        let path = self.path
        try state.withLock { (s: inout State) throws(StateError) in
            // One write call per line (O_APPEND): a line is whole or, if the process dies, last.
            // A short or failed write (a full disk) is cut off again, so that the next line
            // does not land after half a line.
            let size = (try? Syscalls.status(of: s.descriptor))?.st_size
            let reason: String
            do throws(SystemCallError) {
                let written = try Syscalls.writeOnce(s.descriptor, bytes)
                if written == bytes.count {
                    try Syscalls.fdatasync(s.descriptor)
                    apply(&s)
                    s.lines += 1
                    return
                }
                reason = "wrote \(written) of \(bytes.count) bytes"
            } catch {
                reason = error.reason
            }
            if let size { try? Syscalls.truncate(s.descriptor, to: Int(size)) }
            throw StateError(path: path, message: "cannot append a record: \(reason)")
        }
    }

    /// Rewrites the file with one line per live record: a temporary file beside it, flushed,
    /// then renamed over it. Does nothing when the file has one line per record already (a run
    /// that changed nothing writes nothing).
    public func compact() throws(StateError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let path = self.path
        try state.withLock { (s: inout State) throws(StateError) in
            if s.lines == s.live { return }
            let lines =
                s.records.values.sorted(by: { $0.output < $1.output }).map { Line(record: $0) }
                + s.folders.values.sorted(by: { $0.path < $1.path }).map { Line(folder: $0) }
                + s.failures.values.sorted(by: { $0.input < $1.input }).map { Line(failure: $0) }
                + s.placeholders.values.sorted(by: { $0.input < $1.input }).map { Line(placeholder: $0) }
            var text = Data()
            for line in lines {
                do {
                    text += try encoder.encode(line) + Data("\n".utf8)
                } catch {
                    throw StateError(path: path, message: "cannot encode a record: \(error)")
                }
            }
            try JobStateFolder.replace(path, in: s.folder, with: Array(text))
            let fresh = try Self.open(in: s.folder, path: path, flags: O_WRONLY | O_APPEND)
            Syscalls.close(s.descriptor)
            s.descriptor = fresh
            s.lines = s.live
        }
    }
}
