/// A file name pattern over `/`-separated relative paths, as written in a job's `inputs`
/// and `exclude`.
///
/// - `*` matches any run of characters within one folder or file name (also none, also a
///   leading `.`: dot files are not special);
/// - `?` matches one character other than `/`;
/// - `[abc]`, `[a-z]`, `[!abc]` match one character (other than `/`) in, or not in, the set;
/// - `**` as a whole path segment matches any number of folders, none included:
///   `photos/**/*.jpg` matches `photos/a.jpg` and `photos/2024/trip/a.jpg`; at the end of a
///   pattern it matches everything below the folder (`photos/private/**` matches
///   `photos/private/a.jpg` but not `photos/private` itself);
/// - `\` makes the next character literal: `\*`, `\[`.
///
/// Characters are compared as Unicode scalars, case-sensitively. A pattern is relative:
/// it may not start with `/`, and it has no empty segments (`a//b`).
public struct GlobPattern: Hashable, Sendable, CustomStringConvertible {
    /// Why a pattern was refused, with the offset (in Unicode scalars) of the offending
    /// character in the pattern.
    public struct SyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
        /// Where the problem is, in Unicode scalars from the pattern's start.
        public let offset: Int
        /// What is wrong, for a diagnostic.
        public let message: String
        /// The message.
        public var description: String { message }

        /// A problem at `offset`.
        public init(offset: Int, message: String) {
            self.offset = offset
            self.message = message
        }
    }

    enum Atom: Hashable, Sendable {
        case literal(Unicode.Scalar)
        case anyOne
        case anyRun
        case set(ranges: [ClosedRange<Unicode.Scalar>], negated: Bool)
    }

    enum Segment: Hashable, Sendable {
        /// `**`
        case anyFolders
        case name([Atom])
    }

    /// The pattern as written.
    public let text: String
    let segments: [Segment]
    /// How many leading segments hold no wildcard (the fixed folders).
    let fixedCount: Int

    /// Parses `pattern`. Throws ``SyntaxError`` for an empty pattern, a leading `/`, an
    /// empty segment, an unclosed `[`, a trailing `\`, or a `**` that is not a whole segment.
    public init(_ pattern: String) throws(SyntaxError) {
        text = pattern
        let scalars = Array(pattern.unicodeScalars)
        guard !scalars.isEmpty else { throw SyntaxError(offset: 0, message: "empty glob") }
        guard scalars[0] != "/" else {
            throw SyntaxError(offset: 0, message: "a glob is relative to the manifest's folder; remove the leading '/'")
        }
        var segments: [Segment] = []
        var atoms: [Atom] = []
        var segmentStart = 0
        var i = 0
        func closeSegment(at offset: Int) throws(SyntaxError) {
            if atoms.isEmpty { throw SyntaxError(offset: offset, message: "empty folder name in glob") }
            if atoms == [.anyRun, .anyRun] && offset - segmentStart == 2 {
                segments.append(.anyFolders)
            } else {
                segments.append(.name(atoms))
            }
            atoms = []
        }
        while i < scalars.count {
            let c = scalars[i]
            switch c {
            case "/":
                try closeSegment(at: i)
                segmentStart = i + 1
                i += 1
                continue
            case "*":
                if i + 1 < scalars.count, scalars[i + 1] == "*" {
                    let wholeSegment = i == segmentStart && (i + 2 == scalars.count || scalars[i + 2] == "/")
                    guard wholeSegment else {
                        throw SyntaxError(offset: i, message: "'**' must be a whole path segment, as in 'photos/**/*.jpg'")
                    }
                    atoms.append(.anyRun)
                    atoms.append(.anyRun)
                    i += 2
                    continue
                }
                atoms.append(.anyRun)
            case "?":
                atoms.append(.anyOne)
            case "\\":
                guard i + 1 < scalars.count else {
                    throw SyntaxError(offset: i, message: "'\\' at the end of a glob escapes nothing")
                }
                i += 1
                atoms.append(.literal(scalars[i]))
            case "[":
                let open = i
                i += 1
                var negated = false
                if i < scalars.count, scalars[i] == "!" || scalars[i] == "^" {
                    negated = true
                    i += 1
                }
                var ranges: [ClosedRange<Unicode.Scalar>] = []
                var first = true
                while i < scalars.count, scalars[i] != "]" || first {
                    var low = scalars[i]
                    if low == "/" { throw SyntaxError(offset: i, message: "'/' cannot appear in a '[...]' set") }
                    if low == "\\", i + 1 < scalars.count {
                        i += 1
                        low = scalars[i]
                    }
                    var high = low
                    if i + 2 < scalars.count, scalars[i + 1] == "-", scalars[i + 2] != "]" {
                        high = scalars[i + 2]
                        if high == "/" { throw SyntaxError(offset: i + 2, message: "'/' cannot appear in a '[...]' set") }
                        guard low <= high else {
                            throw SyntaxError(offset: i, message: "range '\(low)-\(high)' is backwards")
                        }
                        i += 2
                    }
                    ranges.append(low...high)
                    first = false
                    i += 1
                }
                guard i < scalars.count else { throw SyntaxError(offset: open, message: "'[' is not closed by ']'") }
                atoms.append(.set(ranges: ranges, negated: negated))
            default:
                atoms.append(.literal(c))
            }
            i += 1
        }
        try closeSegment(at: scalars.count)
        self.segments = segments
        fixedCount = segments.prefix { segment in
            if case .name(let atoms) = segment, segment != segments.last {
                return atoms.allSatisfy { if case .literal = $0 { true } else { false } }
            }
            return false
        }.count
    }

    /// The pattern as written.
    public var description: String { text }

    /// The leading folders that hold no wildcard, joined with `/` (`photos/2024` for
    /// `photos/2024/**/*.jpg`); empty when the first segment has a wildcard. The file
    /// search starts there, and `{relpath}` is measured from it.
    public var fixedPrefix: String {
        segments.prefix(fixedCount).map { segment in
            guard case .name(let atoms) = segment else { return "" }
            var s = String.UnicodeScalarView()
            for case .literal(let c) in atoms { s.append(c) }
            return String(s)
        }.joined(separator: "/")
    }

    /// Whether `relativePath` (`/`-separated, relative to the manifest's folder) matches.
    public func matches(_ relativePath: String) -> Bool {
        let parts = relativePath.split(separator: "/", omittingEmptySubsequences: false)
            .map { Array($0.unicodeScalars) }
        return Self.match(segments[...], parts[...])
    }

    /// For a path that matches: its folder relative to ``fixedPrefix`` (`2024/trip` for
    /// `photos/2024/trip/a.jpg` against `photos/**/*.jpg`), empty when the file lies in the
    /// fixed folder itself. `nil` when the path does not match.
    public func relativeFolder(of relativePath: String) -> String? {
        guard matches(relativePath) else { return nil }
        let parts = relativePath.split(separator: "/", omittingEmptySubsequences: false)
        let folders = parts.dropLast().dropFirst(fixedCount)
        return folders.joined(separator: "/")
    }

    /// Segment-level match; `**` works as `*` does within a name (one backtrack point).
    private static func match(_ pattern: ArraySlice<Segment>, _ path: ArraySlice<[Unicode.Scalar]>) -> Bool {
        var p = pattern.startIndex, s = path.startIndex
        var star: (p: Int, s: Int)?
        while s < path.endIndex {
            if p < pattern.endIndex {
                switch pattern[p] {
                case .anyFolders:
                    star = (p, s)
                    p += 1
                    continue
                case .name(let atoms):
                    if matchName(atoms[...], path[s][...]) {
                        p += 1
                        s += 1
                        continue
                    }
                }
            }
            guard let backtrack = star else { return false }
            // The last `**` takes one more folder, and matching goes on after it.
            star = (backtrack.p, backtrack.s + 1)
            p = backtrack.p + 1
            s = backtrack.s + 1
        }
        // A `**` left over matches no folder, which only a `**` before the end may do.
        while p < pattern.endIndex - 1, pattern[p] == .anyFolders { p += 1 }
        return p == pattern.endIndex
    }

    /// Name-level match of `*`, `?`, sets and literals (classic wildcard matching with one
    /// backtrack point: linear in practice, never exponential).
    private static func matchName(_ atoms: ArraySlice<Atom>, _ name: ArraySlice<Unicode.Scalar>) -> Bool {
        var a = atoms.startIndex, n = name.startIndex
        var star: (a: Int, n: Int)?
        while n < name.endIndex {
            if a < atoms.endIndex {
                switch atoms[a] {
                case .anyRun:
                    star = (a, n)
                    a += 1
                    continue
                case .anyOne:
                    a += 1
                    n += 1
                    continue
                case .literal(let c) where c == name[n]:
                    a += 1
                    n += 1
                    continue
                case .set(let ranges, let negated) where ranges.contains { $0.contains(name[n]) } != negated:
                    a += 1
                    n += 1
                    continue
                default: break
                }
            }
            guard let backtrack = star else { return false }
            star = (backtrack.a, backtrack.n + 1)
            a = backtrack.a + 1
            n = backtrack.n + 1
        }
        while a < atoms.endIndex, atoms[a] == .anyRun { a += 1 }
        return a == atoms.endIndex
    }
}
