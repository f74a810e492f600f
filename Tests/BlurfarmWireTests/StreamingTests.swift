import BlurfarmCore
import BlurfarmWire
import PropertyBased
import Testing

/// The decoder against any chunking of the stream, after swift-nio's
/// `ByteToMessageDecoderVerifier`: one byte at a time, many frames at once, shuffled.
@Suite struct StreamingTests {
    /// Feeds `bytes` in pieces of the given sizes (the last piece takes the rest).
    static func feed(_ bytes: [UInt8], cuts: [Int]) -> (messages: [WireMessage], error: WireError?, buffered: Int) {
        var decoder = FrameDecoder()
        var messages: [WireMessage] = []
        var at = 0
        var sizes = cuts.makeIterator()
        while at < bytes.count {
            let n = min(bytes.count - at, max(1, sizes.next() ?? bytes.count))
            decoder.append(bytes[at..<at + n])
            at += n
            let (more, error) = drain(&decoder)
            messages += more
            if let error { return (messages, error, decoder.bufferedByteCount) }
        }
        return (messages, nil, decoder.bufferedByteCount)
    }

    static let streams = Generator<([WireMessage], [Int]), Shrink.None<([WireMessage], [Int])>>(run: { rng in
        var messages: [WireMessage] = []
        for _ in 0..<Int.random(in: 0...8, using: &rng) { messages.append(Random.message(&rng)) }
        let maxCut = [1, 2, 7, 64, 1000].randomElement(using: &rng)!
        return (messages, (0..<4000).map { _ in Int.random(in: 1...maxCut, using: &rng) })
    })

    @Test func randomChunkingsGiveBackTheMessages() async {
        await propertyCheck(count: 400, input: Self.streams) { input in
            let (messages, cuts) = input
            let bytes = messages.flatMap(encoded)
            // Random pieces, one byte at a time, all at once.
            for plan in [cuts, [Int](repeating: 1, count: bytes.count), [bytes.count]] {
                let (decoded, error, buffered) = Self.feed(bytes, cuts: plan)
                #expect(error == nil)
                #expect(sameBits(decoded, messages), "cuts \(plan.prefix(8))…: \(decoded.count) of \(messages.count)")
                #expect(buffered == 0)
            }
        }
    }

    /// Every byte but a frame's last yields nothing; its last yields exactly that message;
    /// frames in shuffled orders, repeated.
    @Test func dripFeedYieldsEachMessageOnItsLastByte() {
        var decoder = FrameDecoder()
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5 {
            for message in RoundTripTests.awkward.shuffled(using: &rng) {
                let bytes = encoded(message)
                for (i, byte) in bytes.enumerated() {
                    decoder.append([byte])
                    let (out, error) = drain(&decoder)
                    #expect(error == nil)
                    if i < bytes.count - 1 {
                        #expect(out.isEmpty, "\(message.type): a message after byte \(i) of \(bytes.count)")
                        #expect(decoder.bufferedByteCount == i + 1)
                    } else {
                        #expect(out == [message])
                        #expect(decoder.bufferedByteCount == 0)
                    }
                }
            }
        }
    }

    @Test func manyFramesAtOnce() {
        var rng = SystemRandomNumberGenerator()
        var expected: [WireMessage] = []
        for _ in 0..<10 { expected += RoundTripTests.awkward.shuffled(using: &rng) }
        var decoder = FrameDecoder()
        let (messages, error) = decodeAll(expected.flatMap(encoded), decoder: &decoder)
        #expect(error == nil)
        #expect(messages == expected)
        #expect(decoder.bufferedByteCount == 0)
    }

    /// A stream cut anywhere yields the messages of its complete frames, no error, and the
    /// rest once the remaining bytes come.
    @Test func truncatedStreamWaitsForMoreBytes() {
        let messages = RoundTripTests.awkward
        let frames = messages.map(encoded)
        let bytes = frames.flatMap { $0 }
        var ends: [Int] = []
        for f in frames { ends.append((ends.last ?? 0) + f.count) }
        for cut in 0...bytes.count {
            var decoder = FrameDecoder()
            let (first, error) = decodeAll(Array(bytes[..<cut]), decoder: &decoder)
            let complete = ends.filter { $0 <= cut }.count
            #expect(error == nil, "cut at \(cut)")
            #expect(first == Array(messages.prefix(complete)), "cut at \(cut)")
            #expect(decoder.bufferedByteCount == cut - (ends.last { $0 <= cut } ?? 0))
            let (rest, restError) = decodeAll(Array(bytes[cut...]), decoder: &decoder)
            #expect(restError == nil)
            #expect(first + rest == messages, "cut at \(cut)")
        }
    }

    @Test func messagesBeforeABadFrameAreDelivered() throws {
        var bad = encoded(.ready)
        bad[0] = 0x58
        var decoder = FrameDecoder()
        decoder.append(encoded(.cancel(taskID: 1)) + encoded(.heartbeat(taskID: 2)) + bad + encoded(.shutdown))
        #expect(try decoder.nextMessage() == .cancel(taskID: 1))
        #expect(try decoder.nextMessage() == .heartbeat(taskID: 2))
        #expect(throws: WireError.badMagic(received: [0x58, 0x46, 0x57, 0x31])) { try decoder.nextMessage() }
    }

    /// After an error the stream is dead: the same error again, nothing buffered, nothing more decoded.
    @Test func theStreamIsDeadAfterAnError() {
        var decoder = FrameDecoder()
        let (_, error) = decodeAll(frame(type: 99, payload: []), decoder: &decoder)
        #expect(error == .unknownMessageType(99))
        #expect(decoder.error == .unknownMessageType(99))
        #expect(decoder.bufferedByteCount == 0)
        decoder.append(encoded(.ready))
        #expect(decoder.bufferedByteCount == 0)
        for _ in 0..<3 {
            #expect(throws: WireError.unknownMessageType(99)) { try decoder.nextMessage() }
        }
    }
}
