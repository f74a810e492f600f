/// Turns messages into frames (see WireProtocol.swift for the layout).
public enum FrameEncoder {
    /// The frame of `message`: header, payload, checksum.
    ///
    /// - Throws: ``WireError/frameTooLarge(size:maximum:)`` when the frame would exceed
    ///   ``WireProtocol/maximumFrameSize`` (inline pixels too large): every peer would refuse it.
    public static func encode(_ message: WireMessage) throws(WireError) -> [UInt8] {
        var w = ByteWriter(reservingCapacity: WireProtocol.headerSize + estimatedPayloadSize(message) + WireProtocol.checksumSize)
        w.bytes.append(contentsOf: WireProtocol.magic)
        w.integer(WireProtocol.version)
        w.integer(message.type.rawValue)
        w.integer(UInt32(0))  // payload length, patched below
        message.writePayload(to: &w)
        let payloadLength = w.bytes.count - WireProtocol.headerSize
        let size = w.bytes.count + WireProtocol.checksumSize
        guard size <= WireProtocol.maximumFrameSize else {
            throw .frameTooLarge(size: size, maximum: WireProtocol.maximumFrameSize)
        }
        w.patch(u32: UInt32(payloadLength), at: 8)
        w.integer(FrameChecksum.of(w.bytes, 0..<w.bytes.count))
        return w.bytes
    }

    /// Enough room for the pixels, so that large frames grow their array once.
    private static func estimatedPayloadSize(_ message: WireMessage) -> Int {
        switch message {
        case .task(let task):
            if case .inline(let source) = task.pixels { return source.samples.count * 4 + 1024 }
        case .result(let result):
            if let output = result.output { return output.samples.count * 4 + 64 }
        default:
            break
        }
        return 256
    }
}
