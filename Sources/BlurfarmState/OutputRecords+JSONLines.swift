import BlurfarmSystem
import Foundation

/// The records file of blurfarm before 0.3.1, `records.jsonl`: one JSON line per event (an
/// output, a created folder, a failed input or a placeholder recorded, or one removed), the
/// last line of a run killed while appending possibly torn. Read only, to migrate it into the
/// index (``OutputRecords/init(folder:)``) or to show a folder not yet migrated
/// (``OutputRecords/read(folder:)``).
enum RecordLines {
    /// The file's name in a job's state folder.
    static let name = "records.jsonl"

    /// One line: a record, the output path of a removed record, a created folder, the path of
    /// a created folder whose record was removed, a failed input, the input path of a failure
    /// forgotten, an input's placeholder, or the input path of one forgotten (every field
    /// optional).
    private struct Line: Decodable {
        var record: OutputRecord?
        var removed: String?
        var folder: CreatedFolder?
        var removedFolder: String?
        var failure: InputFailure?
        var removedFailure: String?
        var placeholder: InputPlaceholder?
        var removedPlaceholder: String?
    }

    /// What the file `name` in the folder open as `folder` holds, the lines applied in order; nil
    /// when there is no such file. A torn last line (the process died appending it) is left out.
    /// - Throws: ``StateError`` when the file is a link, cannot be read, or a line other than
    ///   the last is not a record.
    static func read(in folder: Int32, path: String) throws(StateError) -> OutputRecords.Contents? {
        let fd: Int32
        do {
            fd = try Syscalls.openFile(name, in: folder, flags: O_RDONLY)
        } catch where error.errno == ENOENT {
            return nil
        } catch where error.errno == ELOOP {
            throw StateError(path: path, message: "is a symbolic link: refusing to read it as the records (remove it)")
        } catch {
            throw StateError(path: path, message: "cannot open: \(error.reason)")
        }
        defer { Syscalls.close(fd) }
        let data: Data
        do {
            data = Data(try Syscalls.readAll(fd))
        } catch {
            throw StateError(path: path, message: "cannot read: \(error.reason)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var contents = OutputRecords.Contents()
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (number, line) in lines.enumerated() where !line.isEmpty {
            guard let entry = try? decoder.decode(Line.self, from: Data(line)) else {
                // Only the last line may be torn: the process that appended it died.
                if number == lines.count - 1 { break }
                throw StateError(path: path, message: "line \(number + 1) is not a record (remove the file to start afresh)")
            }
            if let record = entry.record { contents.records[.init(record.output)] = record }
            if let removed = entry.removed { contents.records[.init(removed)] = nil }
            if let folder = entry.folder { contents.folders[.init(folder.path)] = folder }
            if let removed = entry.removedFolder { contents.folders[.init(removed)] = nil }
            if let failure = entry.failure { contents.failures[.init(failure.input)] = failure }
            if let removed = entry.removedFailure { contents.failures[.init(removed)] = nil }
            if let placeholder = entry.placeholder { contents.placeholders[.init(placeholder.input)] = placeholder }
            if let removed = entry.removedPlaceholder { contents.placeholders[.init(removed)] = nil }
        }
        return contents
    }
}
