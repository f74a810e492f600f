/// How blurfarm carries file names, which are bytes on Linux, in Swift strings: every valid
/// UTF-8 sequence as its character, and each byte that is not valid UTF-8 (0x80…0xFF) as the
/// private-use character U+F780 + (byte − 0x80), so 0xE9 is U+F7E9. The mapping is reversible,
/// as Python's `surrogateescape`: a path read from a folder goes through plans, templates,
/// records and messages as a string and is turned back into exactly its bytes at every system
/// call that takes it (``withCString(_:_:)``, in this module's `Syscalls`).
/// People see such bytes as `\xE9` (``ShownName``). A real name that holds one of those
/// private-use characters would be ambiguous, so it is refused (``decode(_:)`` says so).
public enum PathEncoding {
    /// The character standing for byte 0x80; byte `b` ≥ 0x80 is `escapeBase + (b − 0x80)`.
    public static let escapeBase: UInt32 = 0xF780

    /// The characters that stand for bytes: U+F780…U+F7FF.
    public static let escapes: ClosedRange<Unicode.Scalar> = "\u{F780}"..."\u{F7FF}"

    /// The byte `scalar` stands for, or nil when it is an ordinary character.
    @inlinable
    public static func byte(escapedBy scalar: Unicode.Scalar) -> UInt8? {
        escapes.contains(scalar) ? UInt8(scalar.value - escapeBase + 0x80) : nil
    }

    /// The string that carries the name or path whose bytes are `bytes`, and whether it is
    /// ambiguous: true when its valid UTF-8 holds one of U+F780…U+F7FF, which the string could
    /// not tell from an escaped byte (such a name is refused, never processed).
    public static func decode(_ bytes: some Collection<UInt8>) -> (text: String, ambiguous: Bool) {
        if let text = String(validating: bytes, as: UTF8.self) {
            return (text, !PathEncoding.isUTF8(text))
        }
        var text = ""
        var ambiguous = false
        UTF8Parts.forEach(in: bytes) { part in
            switch part {
            case .scalar(let scalar):
                if escapes.contains(scalar) { ambiguous = true }
                text.unicodeScalars.append(scalar)
            case .byte(let byte):
                text.unicodeScalars.append(Unicode.Scalar(escapeBase + UInt32(byte) - 0x80)!)
            }
        }
        return (text, ambiguous)
    }

    /// Whether `path` is exactly its UTF-8 bytes: it holds no escaped byte.
    @inlinable
    public static func isUTF8(_ path: String) -> Bool {
        // U+F780…U+F7FF are EF 9E 80 … EF 9F BF in UTF-8: no 0xEF, no escape (the fast path).
        !path.utf8.contains(0xEF) || !path.unicodeScalars.contains { escapes.contains($0) }
    }

    /// The bytes `path` stands for: its escaped bytes as themselves, the rest as UTF-8.
    public static func bytes(_ path: String) -> [UInt8] {
        if isUTF8(path) { return Array(path.utf8) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(path.utf8.count)
        for scalar in path.unicodeScalars {
            if let byte = byte(escapedBy: scalar) {
                bytes.append(byte)
            } else {
                bytes += String(scalar).utf8
            }
        }
        return bytes
    }

    /// Calls `body` with the bytes `path` stands for as a NUL-terminated C string: what every
    /// system call that takes a path is given.
    @inlinable
    public static func withCString<R>(_ path: String, _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        if isUTF8(path) { return try path.withCString(body) }
        return try (bytes(path) + [0]).withUnsafeBufferPointer { raw in
            try raw.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }
}

/// A byte string cut into its valid UTF-8 characters and the bytes that are not valid UTF-8,
/// in order: what ``PathEncoding`` and ``ShownName`` both read names with.
enum UTF8Parts {
    enum Part {
        case scalar(Unicode.Scalar)
        case byte(UInt8)
    }

    /// Calls `body` with each part of `bytes`: the longest valid prefix is decoded, the byte
    /// that stops it is a part of its own, and decoding starts again after it.
    static func forEach(in bytes: some Collection<UInt8>, _ body: (Part) -> Void) {
        var rest = bytes[...]
        while !rest.isEmpty {
            var iterator = rest.makeIterator()
            var decoder = UTF8()
            var consumed = 0
            loop: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar):
                    body(.scalar(scalar))
                    consumed += UTF8.width(scalar)
                case .emptyInput:
                    return
                case .error:
                    break loop
                }
            }
            rest = rest.dropFirst(consumed)
            body(.byte(rest.first!))
            rest = rest.dropFirst()
        }
    }
}
