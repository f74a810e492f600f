extension Duration {
    /// The duration in seconds.
    @inlinable public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }

    /// Whole milliseconds, rounded down.
    @inlinable public var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }

    /// Whole nanoseconds, at least 0.
    @inlinable public var nanoseconds: UInt64 {
        UInt64(max(0, components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000))
    }
}
