/// The problems found in one file or one run, in the order they are printed: each error
/// followed by its notes, errors ordered by position.
///
/// It is an `Error`, so a `Result` can carry it (an array cannot be one), and a collection
/// of ``Diagnostic``s, so it reads like an array.
public struct Diagnostics: Error, Hashable, Sendable, RandomAccessCollection, CustomStringConvertible {
    /// The diagnostics, each error followed by its notes.
    public private(set) var all: [Diagnostic]

    /// Keeps `diagnostics` in the given order.
    public init(_ diagnostics: [Diagnostic] = []) {
        all = diagnostics
    }

    /// The first position (0).
    public var startIndex: Int { all.startIndex }
    /// One past the last position.
    public var endIndex: Int { all.endIndex }
    /// The diagnostic at `position`.
    public subscript(position: Int) -> Diagnostic { all[position] }

    /// How many errors there are (notes are not counted).
    public var errorCount: Int { all.count(where: { $0.severity == .error }) }

    /// Whether at least one error was found.
    public var hasErrors: Bool { all.contains(where: { $0.severity == .error }) }

    /// Appends one diagnostic.
    public mutating func append(_ diagnostic: Diagnostic) { all.append(diagnostic) }

    /// Appends several diagnostics.
    public mutating func append(contentsOf diagnostics: some Sequence<Diagnostic>) {
        all.append(contentsOf: diagnostics)
    }

    /// The same diagnostics with every error (and the notes that follow it) ordered by the
    /// error's location; errors without a location come first, ties keep their order.
    public func sortedByLocation() -> Diagnostics {
        var groups: [[Diagnostic]] = []
        for diagnostic in all {
            if diagnostic.severity == .note, !groups.isEmpty {
                groups[groups.count - 1].append(diagnostic)
            } else {
                groups.append([diagnostic])
            }
        }
        let ordered = groups.enumerated().sorted { a, b in
            switch (a.element[0].location, b.element[0].location) {
            case (nil, nil): return a.offset < b.offset
            case (nil, _): return true
            case (_, nil): return false
            case (let x?, let y?): return x < y || (x == y && a.offset < b.offset)
            }
        }
        return Diagnostics(ordered.flatMap(\.element))
    }

    /// All lines as ``DiagnosticPrinter`` renders them, the count line last.
    public var description: String { DiagnosticPrinter.render(self) }
}
