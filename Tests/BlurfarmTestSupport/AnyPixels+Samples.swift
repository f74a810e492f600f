import BlurfarmCore

extension AnyPixels {
    /// The 8-bit samples these pixels hold; nil for another format. For `#require`, which a
    /// `guard case` cannot feed: `let samples = try #require(pixels.uint8Samples)`.
    public var uint8Samples: SampleBuffer<UInt8>? {
        if case .uint8(let samples) = self { samples } else { nil }
    }
}
