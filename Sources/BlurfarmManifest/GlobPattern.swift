/// A file name pattern over `/`-separated relative paths, as written in a job's `inputs`
/// and `exclude`.
///
/// - `*` matches any run of characters within one folder or file name (also none);
/// - `?` matches one character other than `/`;
/// - `[abc]`, `[a-z]`, `[!abc]` match one character (other than `/`) in, or not in, the set;
/// - `{a,b,c}` matches any of its alternatives, each a pattern of its own within one name
///   (`*.{jpg,JPG,jpeg}`; `{` may nest, `{,x}` means nothing or `x`), as in the shell and
///   `fd`/ripgrep globs;
/// - `**` as a whole path segment matches any number of folders, none included:
///   `photos/**/*.jpg` matches `photos/a.jpg` and `photos/2024/trip/a.jpg`; at the end of a
///   pattern it matches everything below the folder (`photos/private/**` matches
///   `photos/private/a.jpg` but not `photos/private` itself);
/// - `\` makes the next character literal: `\*`, `\[`, `\{`.
///
/// Hidden names (those that start with `.`, such as macOS's `._IMG.jpg`) are matched as the
/// shell matches them: only by a name pattern (or an alternative of one) that starts with a
/// literal `.`; `*`, `?` and sets never match a leading `.`, and `**` never takes a hidden
/// folder (`photos/**/.thumbs/*.jpg` names one).
///
/// Characters are compared as Unicode scalars, case-sensitively (`*.jpg` does not match
/// `IMG_0042.JPG`: write `*.{jpg,JPG}`). A pattern is relative to the manifest's folder, or
/// absolute when it starts with `/` (`/srv/photos/*.jpg`, ``isAbsolute``): it then matches
/// absolute paths only, as a relative one matches relative paths only. It has no empty
/// segments (`a//b`).
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
        /// A folder or file name: its alternatives, braces expanded (`*.{jpg,png}` is
        /// `*.jpg` or `*.png`); one for a name without braces.
        case name([[Atom]])
    }

    /// A name as parsed, before its braces are expanded.
    private indirect enum Piece: Hashable {
        case atom(Atom)
        case choice([[Piece]])
    }

    /// The most alternatives one name may expand to (`{a,b}{c,d}` is four): a policy against
    /// patterns that would make every match slow.
    public static let alternativesLimit = 1024

    /// The pattern as written.
    public let text: String
    /// Whether the pattern starts with `/`: it names absolute paths, and ``fixedPrefix`` is
    /// absolute (`/` itself when its first segment has a wildcard).
    public let isAbsolute: Bool
    let segments: [Segment]
    /// How many leading segments hold no wildcard (the fixed folders).
    let fixedCount: Int
    /// ``fixedPrefix`` and the `/` after it, in UTF-8, when there are fixed folders: a path
    /// that does not start with these bytes cannot match, which ``matches(_:)`` sees without
    /// taking the path apart (most of what a plan asks is whether an input is one of the
    /// outputs, which lie in another folder).
    private let fixedFolders: [UInt8]

    /// Parses `pattern`. Throws ``SyntaxError`` for an empty pattern (or `/` alone), an
    /// empty segment, an unclosed `[` or `{`, a `}` without its `{`, a `/` within braces, a
    /// name with more than ``alternativesLimit`` alternatives, a trailing `\`, or a `**`
    /// that is not a whole segment.
    public init(_ pattern: String) throws(SyntaxError) {
        text = pattern
        let scalars = Array(pattern.unicodeScalars)
        guard !scalars.isEmpty else { throw SyntaxError(offset: 0, message: "empty glob") }
        isAbsolute = scalars[0] == "/"
        if isAbsolute, scalars.count == 1 { throw SyntaxError(offset: 0, message: "a glob needs a name after '/'") }
        var segments: [Segment] = []
        var pieces: [Piece] = []
        // Open braces, innermost last: where each opened, its finished alternatives, the
        // one being read.
        var braces: [(open: Int, alternatives: [[Piece]], current: [Piece])] = []
        func append(_ piece: Piece) {
            if braces.isEmpty { pieces.append(piece) } else { braces[braces.count - 1].current.append(piece) }
        }
        var segmentStart = isAbsolute ? 1 : 0
        var i = segmentStart
        func closeSegment(at offset: Int) throws(SyntaxError) {
            if pieces.isEmpty { throw SyntaxError(offset: offset, message: "empty folder name in glob") }
            if pieces == [.atom(.anyRun), .atom(.anyRun)] && offset - segmentStart == 2 {
                segments.append(.anyFolders)
            } else {
                let names = Self.expand(pieces[...])
                guard names.count <= Self.alternativesLimit else {
                    throw SyntaxError(
                        offset: segmentStart,
                        message: "this name has \(names.count) alternatives, more than \(Self.alternativesLimit)")
                }
                segments.append(.name(names))
            }
            pieces = []
        }
        while i < scalars.count {
            let c = scalars[i]
            switch c {
            case "/":
                if let brace = braces.last {
                    throw SyntaxError(offset: brace.open, message: "'{' is not closed by '}' within the name ('/' ends it)")
                }
                try closeSegment(at: i)
                segmentStart = i + 1
                i += 1
                continue
            case "{":
                braces.append((i, [], []))
            case "," where !braces.isEmpty:
                braces[braces.count - 1].alternatives.append(braces[braces.count - 1].current)
                braces[braces.count - 1].current = []
            case "}":
                guard let brace = braces.popLast() else {
                    throw SyntaxError(offset: i, message: "'}' without its '{' (write '\\}' for the character)")
                }
                append(.choice(brace.alternatives + [brace.current]))
            case "*":
                if i + 1 < scalars.count, scalars[i + 1] == "*" {
                    let wholeSegment = i == segmentStart && (i + 2 == scalars.count || scalars[i + 2] == "/")
                    guard wholeSegment else {
                        throw SyntaxError(offset: i, message: "'**' must be a whole path segment, as in 'photos/**/*.jpg'")
                    }
                    append(.atom(.anyRun))
                    append(.atom(.anyRun))
                    i += 2
                    continue
                }
                append(.atom(.anyRun))
            case "?":
                append(.atom(.anyOne))
            case "\\":
                guard i + 1 < scalars.count else {
                    throw SyntaxError(offset: i, message: "'\\' at the end of a glob escapes nothing")
                }
                i += 1
                append(.atom(.literal(scalars[i])))
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
                append(.atom(.set(ranges: ranges, negated: negated)))
            default:
                append(.atom(.literal(c)))
            }
            i += 1
        }
        if let brace = braces.last { throw SyntaxError(offset: brace.open, message: "'{' is not closed by '}'") }
        try closeSegment(at: scalars.count)
        self.segments = segments
        fixedCount = segments.prefix { segment in
            if case .name(let names) = segment, names.count == 1, segment != segments.last {
                return names[0].allSatisfy { if case .literal = $0 { true } else { false } }
            }
            return false
        }.count
        fixedFolders = fixedCount == 0 ? [] : Array(Self.fixedPrefix(segments, fixedCount, isAbsolute).utf8) + [UInt8(ascii: "/")]
    }

    /// Every name that `pieces` stands for, braces expanded left to right, each once; stops
    /// growing past ``alternativesLimit``.
    private static func expand(_ pieces: ArraySlice<Piece>) -> [[Atom]] {
        var names: [[Atom]] = [[]]
        for piece in pieces {
            switch piece {
            case .atom(let atom):
                for k in names.indices { names[k].append(atom) }
            case .choice(let alternatives):
                let tails = alternatives.flatMap { expand($0[...]) }
                var seen: Set<[Atom]> = []
                names = names.flatMap { head in tails.map { head + $0 } }.filter { seen.insert($0).inserted }
                if names.count > alternativesLimit { return names }
            }
        }
        return names
    }

    /// The pattern as written.
    public var description: String { text }

    /// The text of a pattern that matches `path` alone: its wildcard characters escaped (a
    /// file named `a[1].jpg` given on a command line).
    public static func escaping(_ path: String) -> String {
        var escaped = ""
        for c in path {
            if "*?[\\{}".contains(c) { escaped.append("\\") }
            escaped.append(c)
        }
        return escaped
    }

    /// The leading folders that hold no wildcard, joined with `/` (`photos/2024` for
    /// `photos/2024/**/*.jpg`, `/srv/photos` for `/srv/photos/*.jpg`); empty when the first
    /// segment of a relative pattern has a wildcard, `/` for an absolute one. The file search
    /// starts there, and `{relpath}` is measured from it.
    public var fixedPrefix: String { Self.fixedPrefix(segments, fixedCount, isAbsolute) }

    private static func fixedPrefix(_ segments: [Segment], _ fixedCount: Int, _ isAbsolute: Bool) -> String {
        let joined = segments.prefix(fixedCount).map { segment in
            guard case .name(let names) = segment else { return "" }
            var s = String.UnicodeScalarView()
            for case .literal(let c) in names[0] { s.append(c) }
            return String(s)
        }.joined(separator: "/")
        return isAbsolute ? "/" + joined : joined
    }

    /// `path` below ``fixedPrefix``: `prefix/path`, without doubling the `/` of an absolute
    /// pattern whose prefix is `/`.
    public func belowFixedPrefix(_ path: String) -> String {
        let prefix = fixedPrefix
        if prefix.isEmpty { return path }
        return prefix.hasSuffix("/") ? prefix + path : prefix + "/" + path
    }

    /// `path`'s names, `nil` when it is absolute and the pattern is not, or the other way round.
    /// Slices of `path`, its scalars read in place: a walk matches every file it lists (an
    /// array of scalars a name took 30% of the walk of 100,000 inputs).
    private func names(_ path: String) -> [Substring.UnicodeScalarView]? {
        guard path.hasPrefix("/") == isAbsolute else { return nil }
        let rest = isAbsolute ? path.dropFirst() : path[...]
        // Split at the bytes of `/` (a split of the characters was half of a match).
        var names: [Substring.UnicodeScalarView] = []
        var start = rest.startIndex
        for index in rest.utf8.indices where rest.utf8[index] == UInt8(ascii: "/") {
            names.append(rest[start..<index].unicodeScalars)
            start = rest.utf8.index(after: index)
        }
        names.append(rest[start...].unicodeScalars)
        return names
    }

    /// Whether `relativePath` (`/`-separated, relative to the manifest's folder; absolute for
    /// an absolute pattern) matches.
    public func matches(_ relativePath: String) -> Bool {
        // Scalars are equal where their UTF-8 bytes are.
        if !fixedFolders.isEmpty, !relativePath.utf8.starts(with: fixedFolders) { return false }
        guard let parts = names(relativePath) else { return false }
        return Self.match(segments, parts)
    }

    /// Whether a path below the folder `relativeFolder` (`/`-separated, relative to the
    /// manifest's folder; "" for that folder itself) could match: the folders a search must
    /// list. `photos/*.png` can match below `photos` and nowhere below `photos/archive`;
    /// `photos/**/*.png` below every folder under `photos` that is not hidden.
    public func mayMatch(below relativeFolder: String) -> Bool {
        if relativeFolder.isEmpty || (isAbsolute && relativeFolder == "/") { return Self.matchPrefix(segments, []) }
        guard let parts = names(relativeFolder) else { return false }
        return Self.matchPrefix(segments, parts)
    }

    /// For a path that matches: its folder relative to ``fixedPrefix`` (`2024/trip` for
    /// `photos/2024/trip/a.jpg` against `photos/**/*.jpg`), empty when the file lies in the
    /// fixed folder itself. `nil` when the path does not match.
    public func relativeFolder(of relativePath: String) -> String? {
        matches(relativePath) ? folderBelowFixedPrefix(of: relativePath) : nil
    }

    /// ``relativeFolder(of:)`` of a path known to match, without matching it again.
    public func folderBelowFixedPrefix(of relativePath: String) -> String {
        // The names as ``names(_:)`` splits them, from the bytes: a `/` is one in UTF-8.
        let names = (isAbsolute ? relativePath.utf8.dropFirst() : relativePath.utf8[...])
            .split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        return names.dropLast().dropFirst(fixedCount).map { String(decoding: $0, as: UTF8.self) }.joined(separator: "/")
    }

    /// Segment-level match, remembered per (pattern segment, path segment) so that any
    /// number of `**` stays quadratic at worst. `**` takes no hidden folder (a name that
    /// starts with `.`).
    private static func match(_ pattern: [Segment], _ path: [Substring.UnicodeScalarView]) -> Bool {
        // 0: not computed, 1: no, 2: yes.
        var memo = [UInt8](repeating: 0, count: (pattern.count + 1) * (path.count + 1))
        func isHidden(_ name: Substring.UnicodeScalarView) -> Bool { name.first == "." }
        func from(_ p: Int, _ s: Int) -> Bool {
            if p == pattern.count { return s == path.count }
            let key = p * (path.count + 1) + s
            if memo[key] != 0 { return memo[key] == 2 }
            let result: Bool
            switch pattern[p] {
            case .anyFolders where p == pattern.count - 1:
                // At the end: everything below, at least one name, none hidden.
                result = s < path.count && !path[s...].contains(where: isHidden)
            case .anyFolders:
                result = from(p + 1, s) || (s < path.count && !isHidden(path[s]) && from(p, s + 1))
            case .name(let names):
                result = s < path.count && names.contains { matchName($0[...], path[s]) } && from(p + 1, s + 1)
            }
            memo[key] = result ? 2 : 1
            return result
        }
        return from(0, 0)
    }

    /// Whether the names `folder` can be the leading folders of a match: some way of matching
    /// them against the pattern's first segments leaves at least one segment to match the
    /// names below (a `**` may take all of them and still match more).
    private static func matchPrefix(_ pattern: [Segment], _ folder: [Substring.UnicodeScalarView]) -> Bool {
        var memo = [UInt8](repeating: 0, count: (pattern.count + 1) * (folder.count + 1))
        func from(_ p: Int, _ s: Int) -> Bool {
            if s == folder.count { return p < pattern.count }
            if p == pattern.count { return false }
            let key = p * (folder.count + 1) + s
            if memo[key] != 0 { return memo[key] == 2 }
            let result: Bool
            switch pattern[p] {
            case .anyFolders:
                result = from(p + 1, s) || (folder[s].first != "." && from(p, s + 1))
            case .name(let names):
                result = names.contains { matchName($0[...], folder[s]) } && from(p + 1, s + 1)
            }
            memo[key] = result ? 2 : 1
            return result
        }
        return from(0, 0)
    }

    /// Name-level match of `*`, `?`, sets and literals (classic wildcard matching with one
    /// backtrack point: linear in practice, never exponential).
    /// A name that starts with `.` (hidden) matches only a pattern that starts with a literal `.`.
    private static func matchName(_ atoms: ArraySlice<Atom>, _ name: Substring.UnicodeScalarView) -> Bool {
        if name.first == ".", atoms.first != .literal(".") { return false }
        var a = atoms.startIndex, n = name.startIndex
        var star: (a: Int, n: Substring.UnicodeScalarView.Index)?
        while n < name.endIndex {
            if a < atoms.endIndex {
                switch atoms[a] {
                case .anyRun:
                    star = (a, n)
                    a += 1
                    continue
                case .anyOne:
                    a += 1
                    name.formIndex(after: &n)
                    continue
                case .literal(let c) where c == name[n]:
                    a += 1
                    name.formIndex(after: &n)
                    continue
                case .set(let ranges, let negated) where ranges.contains { $0.contains(name[n]) } != negated:
                    a += 1
                    name.formIndex(after: &n)
                    continue
                default: break
                }
            }
            guard let backtrack = star else { return false }
            let after = name.index(after: backtrack.n)
            star = (backtrack.a, after)
            a = backtrack.a + 1
            n = after
        }
        while a < atoms.endIndex, atoms[a] == .anyRun { a += 1 }
        return a == atoms.endIndex
    }
}
