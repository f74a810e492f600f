/// Renders of one input kept for the outputs still to come that share them (the formats of a
/// variant; variants that differ only in how they are encoded): a render is kept only while
/// another output of its key is still to be made, and let go after the last, so that no more
/// renders are held than outputs still need. Told every key to come at the start.
public struct SharedRenders<Key: Hashable, Value> {
    /// Outputs still to be made, by key.
    private var pending: [Key: Int] = [:]
    private var kept: [Key: Value] = [:]

    /// For the outputs to come, one `key` each (repeated as often as outputs share it).
    public init(keys: some Sequence<Key>) {
        for key in keys { pending[key, default: 0] += 1 }
    }

    /// The render kept for `key`, if an earlier output of that key made one.
    public func render(for key: Key) -> Value? { kept[key] }

    /// An output of `key` is done, with `render` (nil when it made none: it failed first):
    /// kept while other outputs of `key` are to come, let go after the last.
    public mutating func done(_ key: Key, render: Value?) {
        let left = (pending[key] ?? 1) - 1
        pending[key] = left
        if left > 0, let render { kept[key] = render } else if left <= 0 { kept[key] = nil }
    }
}
