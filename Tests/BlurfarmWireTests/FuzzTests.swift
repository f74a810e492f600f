import BlurfarmCore
import BlurfarmWire
import PropertyBased
import Testing

/// Any bytes at all: the decoder yields messages or an error, never crashes, and every message
/// it yields is exactly the frame it came from (the encoding is canonical).
@Suite struct FuzzTests {
    /// Feeds `bytes` in random pieces and checks what can be checked of any outcome.
    static func check<R: RandomNumberGenerator>(_ bytes: [UInt8], _ rng: inout R) {
        var decoder = FrameDecoder()
        var messages: [WireMessage] = []
        var failure: WireError?
        var at = 0
        while at < bytes.count {
            let n = min(bytes.count - at, Int.random(in: 1...64, using: &rng))
            decoder.append(bytes[at..<at + n])
            at += n
            let (more, error) = drain(&decoder)
            messages += more
            if let error {
                failure = error
                break
            }
        }
        let consumed = messages.flatMap(encoded)
        #expect(Array(bytes.prefix(consumed.count)) == consumed, "a message that is not its frame")
        if let failure {
            #expect(throws: failure) { try decoder.nextMessage() }
            #expect(decoder.bufferedByteCount == 0)
        } else {
            #expect(decoder.bufferedByteCount == bytes.count - consumed.count)
        }
    }

    static let randomBytes = Generator<[UInt8], Shrink.None<[UInt8]>>(run: { rng in
        (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
    })

    @Test func randomBytesNeverCrash() async {
        await propertyCheck(count: 2000, input: Self.randomBytes) { bytes in
            var rng = SystemRandomNumberGenerator()
            Self.check(bytes, &rng)
            Self.check(Array("BFW1".utf8) + bytes, &rng)
            Self.check([0x42, 0x46, 0x57, 0x31, 1, 0] + bytes, &rng)
        }
    }

    /// Random payloads in intact frames of every type: a message or a malformed payload of
    /// that type, nothing else.
    static let framedPayloads = Generator<(UInt16, [UInt8]), Shrink.None<(UInt16, [UInt8])>>(run: { rng in
        let type = UInt16.random(in: 1...8, using: &rng)
        let payload: [UInt8]
        if Bool.random(using: &rng) {
            payload = (0..<Int.random(in: 0...120, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        } else {
            // A valid payload of some message, damaged a little: reaches deeper fields.
            var message = Random.message(&rng)
            while message.type.rawValue != type { message = Random.message(&rng) }
            var p = Array(encoded(message).dropFirst(12).dropLast(4))
            for _ in 0..<Int.random(in: 1...3, using: &rng) where !p.isEmpty {
                let i = Int.random(in: 0..<p.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: p[i] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
                case 1: p[i] = [0, 1, 2, 3, 4, 0x7F, 0x80, 0xFF].randomElement(using: &rng)!
                case 2: p.remove(at: i)
                default: p.insert(UInt8.random(in: 0...255, using: &rng), at: i)
                }
            }
            payload = p
        }
        return (type, payload)
    })

    @Test func randomPayloadsInIntactFrames() async {
        await propertyCheck(count: 3000, input: Self.framedPayloads) { input in
            let (type, payload) = input
            let bytes = frame(type: type, payload: payload)
            var decoder = FrameDecoder()
            let (messages, error) = decodeAll(bytes, decoder: &decoder)
            if let error {
                guard case .malformedPayload(let t, _) = error, t.rawValue == type else {
                    Issue.record("type \(type): \(error)")
                    return
                }
                #expect(messages.isEmpty)
            } else {
                #expect(messages.count == 1)
                #expect(messages.map(\.type.rawValue) == [type])
                #expect(encoded(messages.first ?? .ready) == bytes)
            }
        }
    }

    /// Valid streams damaged at random (flips, cuts, insertions, deletions), in random pieces.
    static let damagedStreams = Generator<[UInt8], Shrink.None<[UInt8]>>(run: { rng in
        var bytes = (0..<Int.random(in: 1...5, using: &rng)).flatMap { _ in encoded(Random.message(&rng)) }
        for _ in 0..<Int.random(in: 0...3, using: &rng) where !bytes.isEmpty {
            let i = Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: bytes[i] ^= UInt8.random(in: 1...255, using: &rng)
            case 1: bytes.removeSubrange(i...)
            case 2: bytes.remove(at: i)
            default: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: i)
            }
        }
        return bytes
    })

    @Test func damagedStreamsNeverCrash() async {
        await propertyCheck(count: 1000, input: Self.damagedStreams) { bytes in
            var rng = SystemRandomNumberGenerator()
            Self.check(bytes, &rng)
        }
    }
}
