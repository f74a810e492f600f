import BlurfarmSystem

/// Images through standard input and output, as image tools take `-` for a file
/// (`blurfarm apply - - --format png`).
///
/// Standard input is copied whole into an anonymous file in memory and decoded from there by
/// the ordinary path (`/proc/self/fd/N`), so every check of a file applies to it: the header's
/// limits, the strict decode, the structure checks. Errors name it `standard input`.
public enum StandardStreams {
    /// The name errors give standard input.
    public static let inputName = "standard input"

    /// Calls `body` with a path that reads what standard input holds (read to its end first);
    /// errors `body` throws that name that path name `standard input` instead.
    ///
    /// - Throws: `ImageIOError` `.fileUnreadable` when standard input cannot be read, or
    ///   `.notAnImage` when it is empty; what `body` throws.
    public static func withInputFile<R>(_ body: (String) throws(ImageIOError) -> R) throws(ImageIOError) -> R {
        let file: Int32
        let size: Int
        do throws(SystemCallError) {
            file = try Syscalls.memoryFile(named: "blurfarm-stdin")
            size = try Syscalls.copyAll(from: 0, to: file)
        } catch {
            throw ImageIOError(code: .fileUnreadable, path: inputName, message: "cannot read: \(error.reason)")
        }
        defer { Syscalls.close(file) }
        guard size > 0 else { throw ImageIOError(code: .notAnImage, path: inputName, message: "is empty") }
        let path = "/proc/self/fd/\(file)"
        do {
            return try body(path)
        } catch where error.path == path {
            throw ImageIOError(code: error.code, path: inputName, message: error.message)
        }
    }

    /// Writes `encoded` to standard output, whole.
    ///
    /// - Throws: `ImageIOError` `.writeFailed` naming `standard output`.
    public static func write(_ encoded: EncodedImage) throws(ImageIOError) {
        do throws(SystemCallError) {
            try Syscalls.writeAll(1, encoded.bytes)
        } catch {
            throw ImageIOError(code: .writeFailed, path: "standard output", message: "cannot write: \(error.reason)")
        }
    }
}
