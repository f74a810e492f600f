import BlurfarmCore

/// One value of a parsed manifest, with where it was written.
///
/// The parser turns text into a tree of nodes; the decoders turn the tree into typed
/// specs. Every node and every map key keeps its ``SourceLocation``, so a decoder can point
/// at the exact place of a wrong value.
public struct Node: Hashable, Sendable {
    /// What a node holds.
    public enum Content: Hashable, Sendable {
        /// A one-line value.
        case scalar(Scalar)
        /// A list: `- item` lines or an inline `[a, b]`.
        case list([Node])
        /// A map: `key: value` lines, keys unique, in the order written.
        case map([MapEntry])
        /// A value the parser could not read; the error is already reported, so decoders
        /// pass over it without a second message.
        case invalid
    }

    /// One `key: value` pair of a map.
    public struct MapEntry: Hashable, Sendable {
        /// The key's name.
        public let key: String
        /// Where the key starts.
        public let keyLocation: SourceLocation
        /// The key's value.
        public let value: Node

        /// An entry of `key` written at `keyLocation`.
        public init(key: String, keyLocation: SourceLocation, value: Node) {
            self.key = key
            self.keyLocation = keyLocation
            self.value = value
        }
    }

    /// What the node holds.
    public let content: Content
    /// Where the value starts: a scalar's first character (its quote, when quoted), a map's
    /// first key, a list's first `-` or its `[`.
    public let location: SourceLocation
    /// Whether lines that belong to this map or list were dropped because of an error
    /// already reported. Decoders do not report missing keys of an incomplete map: the key
    /// may be on a dropped line.
    public let isIncomplete: Bool

    /// A node holding `content`, written at `location`.
    public init(_ content: Content, at location: SourceLocation, isIncomplete: Bool = false) {
        self.content = content
        self.location = location
        self.isIncomplete = isIncomplete
    }

    /// The scalar, when this node is one.
    public var scalar: Scalar? {
        if case .scalar(let s) = content { s } else { nil }
    }

    /// The location of the Unicode scalar at `offset` in a scalar's text (see
    /// ``Scalar/column(ofScalarAt:)``); the node's own location for other nodes.
    public func location(ofScalarAt offset: Int) -> SourceLocation {
        guard let scalar else { return location }
        var l = location
        l.column = scalar.column(ofScalarAt: offset)
        return l
    }
}
