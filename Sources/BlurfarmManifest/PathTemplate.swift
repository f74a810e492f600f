import BlurfarmCore

/// An output path with placeholders, as written in a variant's `path`:
/// `out/backdrops/{relpath}/{stem}.jpg`.
///
/// Placeholders:
/// - `{stem}`: the input's file name without its extension (`IMG_001` for `IMG_001.JPG`);
/// - `{ext}`: the input's extension without the dot (`JPG`), empty when it has none;
/// - `{name}`: the input's whole file name (`IMG_001.JPG`);
/// - `{relpath}`: the input's folder relative to the fixed part of the glob that matched it
///   (``GlobPattern/fixedPrefix``), empty at the top; an empty `{relpath}` takes the `/`
///   after it along, so `out/{relpath}/{stem}.jpg` gives `out/a.jpg`, not `out//a.jpg`;
/// - `{job}` and `{variant}`: the job's and the variant's names;
/// - `{size}`: the width of one of the variant's `sizes` (and only in a variant that has them).
///
/// `{` always opens a placeholder; there is no escape for a literal brace.
public struct PathTemplate: Hashable, Sendable, CustomStringConvertible {
    /// The placeholders a template may use.
    public enum Placeholder: String, CaseIterable, Hashable, Sendable {
        case stem, ext, name, relpath, job, variant, size
    }

    /// A piece of a template.
    public enum Part: Hashable, Sendable {
        case literal(String)
        case placeholder(Placeholder)
    }

    /// Why a template was refused, with the offset (in Unicode scalars) of the offending
    /// character in the template text.
    public struct SyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
        /// Where the problem is, in Unicode scalars from the template's start.
        public let offset: Int
        /// What is wrong, for a diagnostic.
        public let message: String
        /// A likely fix (the known placeholder nearest an unknown one), for a note.
        public let suggestion: String?
        /// The message.
        public var description: String { message }

        /// A problem at `offset`, with a likely fix or `nil`.
        public init(offset: Int, message: String, suggestion: String?) {
            self.offset = offset
            self.message = message
            self.suggestion = suggestion
        }
    }

    /// The template as written.
    public let text: String
    /// Literals and placeholders, in order.
    public let parts: [Part]

    /// Parses `text`. Throws ``SyntaxError`` for an unknown placeholder, an unclosed `{`,
    /// or a `}` that closes nothing.
    public init(_ text: String) throws(SyntaxError) {
        self.text = text
        var parts: [Part] = []
        let utf8 = text.utf8
        /// The offset in Unicode scalars of a UTF-8 index, for messages.
        func offset(_ index: String.Index) -> Int { text.unicodeScalars[..<index].count }
        var literalStart = utf8.startIndex
        var i = utf8.startIndex
        while i < utf8.endIndex {
            let c = utf8[i]
            if c == UInt8(ascii: "}") {
                throw SyntaxError(offset: offset(i), message: "'}' closes no placeholder", suggestion: nil)
            }
            guard c == UInt8(ascii: "{") else {
                i = utf8.index(after: i)
                continue
            }
            let nameStart = utf8.index(after: i)
            guard let close = utf8[nameStart...].firstIndex(of: UInt8(ascii: "}")) else {
                throw SyntaxError(offset: offset(i), message: "placeholder is not closed by '}'", suggestion: nil)
            }
            let name = String(text[nameStart..<close])
            guard let placeholder = Placeholder(rawValue: name) else {
                let known = Placeholder.allCases.map(\.rawValue)
                throw SyntaxError(
                    offset: offset(i),
                    message: "unknown placeholder '{\(name)}'; the placeholders are "
                        + known.map { "{\($0)}" }.joined(separator: " "),
                    suggestion: closestName(to: name, among: known).map { "{\($0)}" })
            }
            if literalStart < i { parts.append(.literal(String(text[literalStart..<i]))) }
            parts.append(.placeholder(placeholder))
            i = utf8.index(after: close)
            literalStart = i
        }
        if literalStart < utf8.endIndex { parts.append(.literal(String(text[literalStart...]))) }
        self.parts = parts
        fixedExtension = Self.fixedExtension(of: parts)
    }

    /// The template as written.
    public var description: String { text }

    /// Whether the template uses `placeholder`.
    public func uses(_ placeholder: Placeholder) -> Bool { parts.contains(.placeholder(placeholder)) }

    /// The extension of the last path segment when it is fixed text (`webp` for
    /// `out/{stem}.webp`), `nil` when there is none or a placeholder stands in it.
    public let fixedExtension: String?

    private static func fixedExtension(of parts: [Part]) -> String? {
        guard case .literal(let last)? = parts.last else { return nil }
        let file = last.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = file.lastIndex(of: "."), dot != file.startIndex || parts.count > 1 else { return nil }
        let ext = file[file.index(after: dot)...]
        return ext.isEmpty ? nil : String(ext)
    }

    /// Why a path could not be made for one input: a placeholder's value would make a whole
    /// path segment `.` or `..`, climbing out of (or standing for) the folder the template names.
    public struct ClimbError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The placeholder whose value made the segment.
        public let placeholder: Placeholder
        /// The segment it made.
        public let segment: String
        /// A segment `segment` made by `placeholder`.
        public init(placeholder: Placeholder, segment: String) {
            self.placeholder = placeholder
            self.segment = segment
        }

        /// The message, for a diagnostic.
        public var description: String {
            "'{\(placeholder.rawValue)}' would make the path segment '\(segment)', which climbs out of the template's folder"
        }
    }

    /// The path for one input of one variant (at one of its `sizes`, when it has them).
    /// - Throws: ``ClimbError`` when a placeholder's value makes a whole segment `.` or `..`
    ///   (an input named `...png` has the stem `..`): the file would not be where the template
    ///   says. Values are file and folder names, so they hold no `/` other than ``relpath``'s.
    public func expand(
        stem: String, ext: String, name: String, relpath: String, job: String, variant: String, size: Int? = nil
    ) throws(ClimbError) -> String {
        var result = ""
        // The current segment, as its length and its dots in bytes (read from the bytes: a
        // character at a time was 6% of a no-change run), and the placeholder that made
        // (part of) it, if any.
        var (length, dots) = (0, 0)
        var maker: Placeholder?
        func closeSegment() throws(ClimbError) {
            if let maker, length == dots, dots == 1 || dots == 2 {
                throw ClimbError(placeholder: maker, segment: dots == 1 ? "." : "..")
            }
            (length, dots) = (0, 0)
        }
        func append(_ text: Substring, from placeholder: Placeholder?) throws(ClimbError) {
            for byte in text.utf8 {
                if byte == UInt8(ascii: "/") {
                    try closeSegment()
                    maker = placeholder
                } else {
                    length += 1
                    if byte == UInt8(ascii: ".") { dots += 1 }
                    if let placeholder { maker = placeholder }
                }
            }
            result += text
        }
        var skipSlash = false
        for part in parts {
            switch part {
            case .literal(let s):
                try append(skipSlash && s.hasPrefix("/") ? s.dropFirst() : s[...], from: nil)
                skipSlash = false
            case .placeholder(let p):
                let value: String
                switch p {
                case .stem: value = stem
                case .ext: value = ext
                case .name: value = name
                case .relpath: value = relpath
                case .job: value = job
                case .variant: value = variant
                case .size: value = size.map(String.init) ?? ""
                }
                try append(value[...], from: p)
                skipSlash = p == .relpath && value.isEmpty
            }
        }
        try closeSegment()
        return result
    }
}
