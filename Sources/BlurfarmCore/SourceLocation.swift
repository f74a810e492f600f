/// A place in a text file: the file's path as the user gave it, a line and a column.
///
/// Lines and columns count from 1. A column counts Unicode scalars, not bytes or
/// grapheme clusters, so `é` written as one scalar is one column and a tab is one column.
public struct SourceLocation: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The file's path as given to the parser (printed as is, e.g. `jobs/backdrops.job`).
    public var file: String
    /// The line, from 1.
    public var line: Int
    /// The column in Unicode scalars, from 1.
    public var column: Int

    /// The location `file:line:column` (both from 1).
    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column`, the form compilers and editors understand.
    public var description: String { "\(file):\(line):\(column)" }

    /// Orders locations in the same file by position; files compare by path.
    public static func < (a: SourceLocation, b: SourceLocation) -> Bool {
        (a.file, a.line, a.column) < (b.file, b.line, b.column)
    }
}
