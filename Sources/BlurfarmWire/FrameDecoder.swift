/// Reassembles messages from a byte stream cut into any chunks.
///
/// Give it bytes as they arrive with ``append(_:)`` and take the complete messages with
/// ``nextMessage()`` until it returns nil (it needs more bytes). It looks at a frame's 12-byte
/// header before taking anything: a frame with a bad magic, another version, an unknown type
/// or a size over the maximum is refused from its header alone, before its payload is waited
/// for. Then it waits for the whole frame, checks the checksum and decodes the payload.
///
/// After an error the stream is dead: ``nextMessage()`` throws the same error again, and
/// bytes appended after it are dropped.
///
/// ```swift
/// decoder.append(chunk)
/// while let message = try decoder.nextMessage() { handle(message) }
/// ```
public struct FrameDecoder: Sendable {
    /// Received bytes; those before `start` are consumed.
    private var buffer: [UInt8] = []
    private var start = 0
    /// The error that killed the stream.
    public private(set) var error: WireError?
    /// The largest frame accepted, in bytes (header and checksum included).
    public let maximumFrameSize: Int

    /// Beyond this capacity the buffer is released once empty, so one large frame does not
    /// pin its memory for the rest of the stream.
    private static let retainedCapacity = 1 << 20

    /// A decoder at the start of a stream. `maximumFrameSize` may be lowered below the
    /// protocol's (e.g. for local workers, whose frames carry no pixels).
    public init(maximumFrameSize: Int = WireProtocol.maximumFrameSize) {
        precondition(maximumFrameSize >= WireProtocol.headerSize + WireProtocol.checksumSize)
        self.maximumFrameSize = maximumFrameSize
    }

    /// Bytes received and not yet consumed as messages: the start of an incomplete frame,
    /// or frames not yet taken with ``nextMessage()``.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds bytes received from the stream (any amount, cut anywhere).
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        guard error == nil else { return }
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message, or nil when the next frame is not complete yet.
    ///
    /// - Throws: ``WireError``, from the first bad frame on (the stream is dead).
    public mutating func nextMessage() throws(WireError) -> WireMessage? {
        if let error { throw error }
        do {
            return try decodeFrame()
        } catch {
            self.error = error
            buffer = []
            start = 0
            throw error
        }
    }

    private mutating func decodeFrame() throws(WireError) -> WireMessage? {
        let available = buffer.count - start
        guard available >= WireProtocol.headerSize else { return nil }
        // Peek at the header; nothing is consumed until the whole frame has decoded.
        let magic = Array(buffer[start..<start + 4])
        guard magic == WireProtocol.magic else { throw .badMagic(received: magic) }
        let version = peek(UInt16.self, at: start + 4)
        guard version == WireProtocol.version else {
            throw .unsupportedVersion(received: version, supported: WireProtocol.version)
        }
        let typeCode = peek(UInt16.self, at: start + 6)
        guard let type = WireMessageType(rawValue: typeCode) else { throw .unknownMessageType(typeCode) }
        let payloadLength = Int(peek(UInt32.self, at: start + 8))
        let frameSize = WireProtocol.headerSize + payloadLength + WireProtocol.checksumSize
        guard frameSize <= maximumFrameSize else { throw .frameTooLarge(size: frameSize, maximum: maximumFrameSize) }
        guard available >= frameSize else { return nil }

        let payloadEnd = start + WireProtocol.headerSize + payloadLength
        let received = peek(UInt32.self, at: payloadEnd)
        let computed = FrameChecksum.of(buffer, start..<payloadEnd)
        guard received == computed else { throw .checksumMismatch(received: received, computed: computed) }

        let message: WireMessage
        do {
            // The reader shares the buffer only inside this block.
            var reader = ByteReader(buffer, range: start + WireProtocol.headerSize..<payloadEnd)
            message = try WireMessage.readPayload(type, from: &reader)
        } catch {
            throw .malformedPayload(type: type, problem: error)
        }
        start += frameSize
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
            start = 0
        }
        return message
    }

    private func peek<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        var v = T.zero
        for k in 0..<MemoryLayout<T>.size { v |= T(truncatingIfNeeded: buffer[offset + k]) << (8 * k) }
        return v
    }
}
