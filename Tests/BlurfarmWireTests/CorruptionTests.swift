import BlurfarmCore
import BlurfarmWire
import Testing

/// Each kind of damage gives its exact ``WireError``.
@Suite struct CorruptionTests {
    static let maximum = WireProtocol.maximumFrameSize

    static func u16(_ b: [UInt8], _ at: Int) -> UInt16 { UInt16(b[at]) | UInt16(b[at + 1]) << 8 }
    static func u32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }

    static func header(type: UInt16 = 3, length: UInt32, version: UInt16 = WireProtocol.version) -> [UInt8] {
        var b = Bytes(bytes: Array("BFW1".utf8))
        b.u16(version)
        b.u16(type)
        b.u32(length)
        return b.bytes
    }

    static func outcome(_ bytes: [UInt8], decoder: FrameDecoder = FrameDecoder()) -> (messages: [WireMessage], error: WireError?) {
        var decoder = decoder
        return decodeAll(bytes, decoder: &decoder)
    }

    // MARK: Header

    @Test func wrongMagic() {
        #expect(Self.outcome(frame(type: 2, payload: [], magic: Array("BFW2".utf8))).error == .badMagic(received: Array("BFW2".utf8)))
        #expect(Self.outcome(frame(type: 2, payload: [], magic: [0, 0, 0, 0])).error == .badMagic(received: [0, 0, 0, 0]))
        // Frames of another protocol entirely: HTTP, a JSON line.
        #expect(Self.outcome(Array("GET / HTTP/1.1\r\n".utf8)).error == .badMagic(received: Array("GET ".utf8)))
        #expect(Self.outcome(Array("{\"type\": \"ready\"}\n".utf8)).error == .badMagic(received: Array("{\"ty".utf8)))
    }

    @Test func version99IsRefusedNamingBothVersions() {
        let error = Self.outcome(frame(type: 2, payload: [], version: 99)).error
        #expect(error == .unsupportedVersion(received: 99, supported: 11))
        #expect(error?.description == "unsupported protocol version 99: this peer speaks version 11")
        // From the header alone, whatever follows.
        #expect(Self.outcome(Self.header(type: 3, length: 1000, version: 99)).error == .unsupportedVersion(received: 99, supported: 11))
        #expect(Self.outcome(frame(type: 2, payload: [], version: 0)).error == .unsupportedVersion(received: 0, supported: 11))
        // The version before segment files, the one before detection tasks, and the one before
        // it, whose frames end in a CRC-32.
        #expect(Self.outcome(frame(type: 2, payload: [], version: 10)).error == .unsupportedVersion(received: 10, supported: 11))
        #expect(Self.outcome(frame(type: 2, payload: [], version: 9)).error == .unsupportedVersion(received: 9, supported: 11))
        #expect(Self.outcome(frame(type: 2, payload: [], version: 8)).error == .unsupportedVersion(received: 8, supported: 11))
    }

    @Test(arguments: [UInt16(0), 13, 0x100, 0xFFFF])
    func unknownMessageType(_ type: UInt16) {
        #expect(Self.outcome(frame(type: type, payload: [])).error == .unknownMessageType(type))
    }

    /// The length is checked from the 12 header bytes: the payload is never waited for.
    @Test func lengthOverTheMaximumFailsFromTheHeaderAlone() {
        for length in [UInt32(Self.maximum - 16 + 1), UInt32(Self.maximum), UInt32.max] {
            var decoder = FrameDecoder()
            decoder.append(Self.header(length: length))
            #expect(decoder.bufferedByteCount == 12)
            #expect(throws: WireError.frameTooLarge(size: 12 + Int(length) + 4, maximum: Self.maximum)) {
                try decoder.nextMessage()
            }
            #expect(decoder.bufferedByteCount == 0)
        }
    }

    @Test func lengthAtTheMaximumWaitsForThePayload() throws {
        var decoder = FrameDecoder()
        decoder.append(Self.header(length: UInt32(Self.maximum - 16)))
        #expect(try decoder.nextMessage() == nil)
        #expect(decoder.bufferedByteCount == 12)
    }

    @Test func aDecoderCanBeStricterThanTheProtocol() {
        let message = WireMessage.failure(TaskFailure(taskID: 1, message: String(repeating: "x", count: 100 - 16 - 12)))
        let bytes = encoded(message)
        #expect(bytes.count == 100)
        #expect(Self.outcome(bytes, decoder: FrameDecoder(maximumFrameSize: 100)).messages == [message])
        let longer = encoded(.failure(TaskFailure(taskID: 1, message: String(repeating: "x", count: 100 - 16 - 12 + 1))))
        #expect(Self.outcome(Array(longer[0..<12]), decoder: FrameDecoder(maximumFrameSize: 100)).error == .frameTooLarge(size: 101, maximum: 100))
    }

    // MARK: One byte flipped, anywhere

    static let samples: [WireMessage] = [
        .task(TaskMessage(
            taskID: 77, imageID: 3, attempt: 2, tile: Rect(x: 0, y: -4, width: 2, height: 1), image: Rect(width: 9, height: 9),
            filters: [FilterSpec(name: "gaussian", arguments: ["sigma": .number(3)]), FilterSpec(name: "é", arguments: ["s": .string("∞")])],
            edge: .mirror, colour: .linear,
            pixels: .inline(source: InlinePixels(rect: Rect(x: 0, y: -5, width: 2, height: 2), channels: 3, samples: (0..<12).map { Float($0) / 11 })))),
        .ready,
        .heartbeat(taskID: 12),
    ]

    /// What flipping byte `i` of `original` into `corrupted` must give: nil when the decoder
    /// must wait for more bytes (a length grown within the maximum).
    static func expected(original: [UInt8], corrupted c: [UInt8], at i: Int) -> WireError? {
        let n = c.count
        switch i {
        case 0..<4:
            return .badMagic(received: Array(c[0..<4]))
        case 4..<6:
            return .unsupportedVersion(received: u16(c, 4), supported: WireProtocol.version)
        case 6..<8:
            let type = u16(c, 6)
            guard WireMessageType(rawValue: type) != nil else { return .unknownMessageType(type) }
            return .checksumMismatch(received: u32(c, n - 4), computed: referenceChecksum(c[0..<n - 4]))
        case 8..<12:
            let length = Int(u32(c, 8))
            if 16 + length > maximum { return .frameTooLarge(size: 16 + length, maximum: maximum) }
            if 16 + length > n { return nil }
            return .checksumMismatch(received: u32(c, 12 + length), computed: referenceChecksum(c[0..<12 + length]))
        case 12..<(n - 4):
            return .checksumMismatch(received: u32(original, n - 4), computed: referenceChecksum(c[0..<n - 4]))
        default:
            return .checksumMismatch(received: u32(c, n - 4), computed: referenceChecksum(original[0..<n - 4]))
        }
    }

    @Test(arguments: samples)
    func everyFlippedByteGivesItsError(_ message: WireMessage) {
        let original = encoded(message)
        for i in original.indices {
            for mask: UInt8 in [0x01, 0x10, 0x80, 0xFF] {
                var corrupted = original
                corrupted[i] ^= mask
                let (messages, error) = Self.outcome(corrupted)
                #expect(messages.isEmpty, "byte \(i) ^ \(mask)")
                #expect(error == Self.expected(original: original, corrupted: corrupted, at: i), "byte \(i) ^ \(mask)")
            }
        }
    }

    /// Spot checks of the model above, written out.
    @Test func flipsInEachPartOfTheFrame() {
        let original = encoded(.cancel(taskID: 5))  // 12 + 8 + 4 bytes
        let crc = Self.u32(original, 20)
        var payload = original
        payload[12] ^= 0x01  // task 5 becomes task 4
        #expect(Self.outcome(payload).error == .checksumMismatch(received: crc, computed: referenceChecksum(encoded(.cancel(taskID: 4))[0..<20])))
        var checksum = original
        checksum[23] ^= 0x80
        #expect(Self.outcome(checksum).error == .checksumMismatch(received: crc ^ 0x8000_0000, computed: crc))
        var type = original
        type[6] = 7  // cancel (8) becomes shutdown (7): a known type, caught by the checksum
        #expect(Self.outcome(type).error == .checksumMismatch(received: crc, computed: referenceChecksum(type[0..<20])))
        var length = original
        length[8] = 9  // one byte longer than what arrived: wait
        #expect(Self.outcome(length).error == nil)
        #expect(Self.outcome(length).messages.isEmpty)
    }

    // MARK: Malformed payloads (intact frames)

    static func malformed(_ type: UInt16, _ build: (inout Bytes) -> Void) -> WireError? {
        var b = Bytes()
        build(&b)
        return outcome(frame(type: type, payload: b.bytes)).error
    }

    @Test func truncatedFieldsAndTrailingBytes() {
        #expect(Self.malformed(1, { $0.u32(7); $0.u16(1); $0.bytes += [1, 2, 3] }) == .malformedPayload(type: .hello, problem: .truncated(field: "pid")))
        #expect(Self.malformed(1, { $0.u32(7); $0.u16(1); $0.i32(5); $0.u8(0) }) == .malformedPayload(type: .hello, problem: .trailingBytes(count: 1)))
        #expect(Self.malformed(2, { $0.u8(0) }) == .malformedPayload(type: .ready, problem: .trailingBytes(count: 1)))
        #expect(Self.malformed(7, { $0.bytes += [1, 2, 3] }) == .malformedPayload(type: .shutdown, problem: .trailingBytes(count: 3)))
        #expect(Self.malformed(8, { $0.bytes += [1, 2, 3, 4, 5, 6, 7] }) == .malformedPayload(type: .cancel, problem: .truncated(field: "taskID")))
        #expect(Self.malformed(8, { $0.u64(1); $0.u8(0) }) == .malformedPayload(type: .cancel, problem: .trailingBytes(count: 1)))
        #expect(Self.malformed(6, { _ in }) == .malformedPayload(type: .heartbeat, problem: .truncated(field: "taskID")))
        #expect(Self.malformed(6, { $0.u8(1); $0.bytes += [1, 2, 3] }) == .malformedPayload(type: .heartbeat, problem: .truncated(field: "taskID")))
        #expect(Self.malformed(6, { $0.u8(0); $0.u8(0) }) == .malformedPayload(type: .heartbeat, problem: .trailingBytes(count: 1)))
        #expect(Self.malformed(5, { $0.u64(1); $0.u32(1_000_000); $0.bytes += Array("abc".utf8) }) == .malformedPayload(type: .failure, problem: .truncated(field: "message")))
        #expect(Self.malformed(5, { $0.u64(1); $0.u32(.max) }) == .malformedPayload(type: .failure, problem: .truncated(field: "message")))
        #expect(Self.malformed(4, { $0.u64(1); $0.u64(2); $0.u64(3) }) == .malformedPayload(type: .result, problem: .truncated(field: "output")))
    }

    @Test(arguments: [[UInt8(0xFF)], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0x61, 0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80]])
    func invalidUTF8(_ bytes: [UInt8]) {
        #expect(Self.malformed(5, { $0.u64(1); $0.u32(UInt32(bytes.count)); $0.bytes += bytes })
            == .malformedPayload(type: .failure, problem: .invalidUTF8(field: "message")))
    }

    @Test func badTags() {
        #expect(Self.malformed(6, { $0.u8(2) }) == .malformedPayload(type: .heartbeat, problem: .badTag(field: "taskID", tag: 2)))
        #expect(Self.malformed(4, { $0.u64(1); $0.u64(2); $0.u64(3); $0.u8(7) }) == .malformedPayload(type: .result, problem: .badTag(field: "output", tag: 7)))
    }

    @Test func invalidInlinePixels() {
        func result(_ rect: (Int64, Int64, Int64, Int64), channels: UInt8, floats: Int) -> WireError? {
            Self.malformed(4, { b in
                b.u64(1)
                b.u64(2)
                b.u64(3)
                b.u8(1)
                b.rect(rect.0, rect.1, rect.2, rect.3)
                b.u8(channels)
                for _ in 0..<floats { b.u32(0) }
            })
        }
        #expect(result((0, 0, 1, 1), channels: 4, floats: 4) == nil)  // the control: valid
        #expect(result((0, 0, 1, 1), channels: 5, floats: 5) == .malformedPayload(type: .result, problem: .invalidValue(field: "output.channels", reason: "channels must be 3 or 4, not 5")))
        #expect(result((0, 0, 1, 1), channels: 4, floats: 3) == .malformedPayload(type: .result, problem: .truncated(field: "output.samples")))
        #expect(result((0, 0, 1, 1), channels: 4, floats: 5) == .malformedPayload(type: .result, problem: .trailingBytes(count: 4)))
        #expect(result((0, 0, -1, 1), channels: 4, floats: 0) == .malformedPayload(type: .result, problem: .invalidValue(field: "output.rect", reason: "negative size -1x1")))
        #expect(result((.max, 0, 1, 1), channels: 4, floats: 4) == .malformedPayload(type: .result, problem: .invalidValue(field: "output.rect", reason: "the far edge overflows")))
        #expect(result((0, 0, 1 << 40, 1 << 40), channels: 4, floats: 0) == .malformedPayload(type: .result, problem: .invalidValue(field: "output.rect", reason: "too many pixels")))
        #expect(result((0, 0, 1 << 20, 1 << 20), channels: 4, floats: 1) == .malformedPayload(type: .result, problem: .truncated(field: "output.samples")))
    }

    // MARK: Tasks

    struct Region {
        var segment: UInt32 = 1, device: UInt64 = 23, inode: UInt64 = 4711, offset: UInt64 = 0
        var rect: (Int64, Int64, Int64, Int64) = (0, 0, 2, 2)
        var channels: UInt8 = 4, format: UInt8 = 0, stride: UInt64 = 8

        func write(_ b: inout Bytes) {
            b.u32(segment)
            b.u64(device)
            b.u64(inode)
            b.u64(offset)
            b.rect(rect.0, rect.1, rect.2, rect.3)
            b.u8(channels)
            b.u8(format)
            b.u64(stride)
        }
    }

    /// A task payload with one gaussian filter and shared regions, built by hand; each argument
    /// changes one part.
    static func task(
        tile: (Int64, Int64, Int64, Int64) = (0, 0, 2, 2), filters: ((inout Bytes) -> Void)? = nil, edge: UInt8 = 0,
        colour: UInt8 = 0, regions: ((inout Bytes) -> Void)? = nil, pixelsTag: UInt8 = 0, source: Region = Region(), output: Region = Region(),
        background: [Double] = [0, 0.5, 1]
    ) -> [UInt8] {
        var b = Bytes()
        b.u64(1)
        b.u64(2)
        b.u32(1)
        b.rect(tile.0, tile.1, tile.2, tile.3)
        b.rect(0, 0, 2, 2)
        if let filters {
            filters(&b)
        } else {
            b.u32(1)
            b.string("gaussian")
            b.u32(1)
            b.string("sigma")
            b.u8(0)
            b.u64((2.0).bitPattern)
            b.u32(0)  // everywhere
            b.u8(0)
            b.u8(0)
        }
        b.u8(edge)
        b.u8(colour)
        if let regions {
            regions(&b)
        } else {
            b.u32(0)
            b.u8(0)  // not inverted
            b.u8(0)  // the whole image
        }
        b.u8(pixelsTag)
        source.write(&b)
        output.write(&b)
        for value in background { b.u64(value.bitPattern) }
        return b.bytes
    }

    /// One region, built by hand; each argument changes one part.
    static func region(
        shape: UInt8 = 0, unit: UInt8 = 0, x: Double = 1, width: Double = 2, feather: Double = 0, invert: UInt8 = 0,
        extent: UInt8 = 0, count: UInt32 = 1
    ) -> (inout Bytes) -> Void {
        { b in
            b.u32(count)
            for _ in 0..<count {
                b.u8(shape)
                for value in [x, 1, width, 2] {
                    b.u8(unit)
                    b.u64(value.bitPattern)
                }
                b.u64(Double(0).bitPattern)
                b.u64(feather.bitPattern)
            }
            b.u8(invert)
            b.u8(extent)
        }
    }

    static func taskError(_ payload: [UInt8]) -> PayloadProblem? {
        switch outcome(frame(type: 3, payload: payload)).error {
        case nil: nil
        case .malformedPayload(.task, let problem): problem
        case let other?: .invalidValue(field: "(not a payload problem)", reason: "\(other)")
        }
    }

    static func filter(
        _ name: [UInt8], _ arguments: [(name: String, tag: UInt8, value: [UInt8])], regions: ((inout Bytes) -> Void)? = nil
    ) -> (inout Bytes) -> Void {
        { b in
            b.u32(1)
            b.u32(UInt32(name.count))
            b.bytes += name
            b.u32(UInt32(arguments.count))
            for a in arguments {
                b.string(a.name)
                b.u8(a.tag)
                b.bytes += a.value
            }
            if let regions {
                regions(&b)
            } else {
                b.u32(0)  // everywhere
                b.u8(0)
                b.u8(0)
            }
        }
    }

    @Test func theHandBuiltTaskIsValid() {
        let (messages, error) = Self.outcome(frame(type: 3, payload: Self.task()))
        #expect(error == nil)
        guard case .task(let task) = messages.first else {
            Issue.record("no task")
            return
        }
        #expect(task.filters == [FilterSpec(name: "gaussian", arguments: ["sigma": .number(2)])])
        #expect(task.pixels == .shared(
            source: SharedRegion(
                segment: 1, file: FileIdentity(device: 23, inode: 4711), byteOffset: 0, rect: Rect(width: 2, height: 2),
                channels: 4, rowStride: 8),
            output: SharedRegion(
                segment: 1, file: FileIdentity(device: 23, inode: 4711), byteOffset: 0, rect: Rect(width: 2, height: 2),
                channels: 4, rowStride: 8),
            background: SIMD3(0, 0.5, 1)))
    }

    @Test func invalidTaskFields() {
        #expect(Self.taskError(Self.task(edge: 4)) == .badTag(field: "edge", tag: 4))
        #expect(Self.taskError(Self.task(colour: 2)) == .badTag(field: "colour", tag: 2))
        #expect(Self.taskError(Self.task(pixelsTag: 2)) == .badTag(field: "pixels", tag: 2))
        #expect(Self.taskError(Self.task(regions: Self.region(shape: 2))) == .badTag(field: "regions[0].shape", tag: 2))
        #expect(Self.taskError(Self.task(regions: Self.region(unit: 2))) == .badTag(field: "regions[0].x", tag: 2))
        #expect(Self.taskError(Self.task(regions: Self.region(width: 0))) == .invalidValue(field: "regions[0].width", reason: "0.0 is not a size > 0"))
        #expect(Self.taskError(Self.task(regions: Self.region(x: .nan))) == .invalidValue(field: "regions[0].x", reason: "nan is not a finite position"))
        #expect(Self.taskError(Self.task(regions: Self.region(feather: -1))) == .invalidValue(field: "regions[0].feather", reason: "-1.0 is not a number of pixels >= 0"))
        #expect(Self.taskError(Self.task(regions: Self.region(invert: 2))) == .badTag(field: "regions.invert", tag: 2))
        #expect(Self.taskError(Self.task(edge: 3, regions: Self.region())) == .invalidValue(
            field: "regions", reason: "regions are placed on an image the chain keeps the size of, not with edge 'grow'"))
        #expect(Self.taskError(Self.task(regions: Self.region())) == nil)
        // A filter's own regions: blended, and not with grow.
        let gaussian = Self.filter(Array("gaussian".utf8), [], regions: Self.region())
        #expect(Self.taskError(Self.task(filters: gaussian)) == nil)
        #expect(Self.taskError(Self.task(filters: Self.filter(Array("g".utf8), [], regions: Self.region(extent: 2)))) == .invalidValue(
            field: "filters[0].regions.extent", reason: "a filter's regions blend; only a chain writes their box"))
        #expect(Self.taskError(Self.task(filters: gaussian, edge: 3)) == .invalidValue(
            field: "filters[0].regions", reason: "regions are placed on an image the chain keeps the size of, not with edge 'grow'"))
        #expect(Self.taskError(Self.task(regions: Self.region(extent: 2))) == nil)
        #expect(Self.taskError(Self.task(regions: Self.region(extent: 3))) == .badTag(field: "regions.extent", tag: 3))
        for (invert, count): (UInt8, UInt32) in [(1, 1), (0, 0)] {
            #expect(Self.taskError(Self.task(regions: Self.region(invert: invert, extent: 1, count: count))) == .invalidValue(
                field: "regions.extent", reason: "only some regions, not inverted, have a box to write"))
        }
        #expect(Self.taskError(Self.task(tile: (0, 0, 1, -1))) == .invalidValue(field: "tile", reason: "negative size 1x-1"))
        #expect(Self.taskError(Self.task(tile: (0, .max, 1, 1))) == .invalidValue(field: "tile", reason: "the far edge overflows"))
        #expect(Self.taskError(Self.task(filters: { $0.u32(.max) })) == .badTag(field: "filters[0].regions[0].x", tag: 23))
        #expect(Self.taskError(Self.task(filters: Self.filter([0x67, 0xFF], []))) == .invalidUTF8(field: "filters[0].name"))
        #expect(Self.taskError(Self.task(filters: Self.filter(Array("g".utf8), [("a", 4, [])]))) == .badTag(field: "filters[0].arguments[0].value", tag: 4))
        #expect(Self.taskError(Self.task(filters: Self.filter(Array("g".utf8), [("a", 2, [2])]))) == .badTag(field: "filters[0].arguments[0].value", tag: 2))
        #expect(Self.taskError(Self.task(filters: Self.filter(Array("g".utf8), [("a", 3, [1, 0, 0, 0, 0xFF])]))) == .invalidUTF8(field: "filters[0].arguments[0].value"))
        #expect(Self.taskError(Self.task(filters: Self.filter(Array("g".utf8), [("b", 2, [1]), ("a", 2, [0])])))
            == .invalidValue(field: "filters[0].arguments[1].name", reason: "'a' does not follow 'b': names go in increasing byte order, once each"))
        #expect(Self.taskError(Self.task(filters: Self.filter(Array("g".utf8), [("a", 2, [1]), ("a", 2, [0])])))
            == .invalidValue(field: "filters[0].arguments[1].name", reason: "'a' does not follow 'a': names go in increasing byte order, once each"))
        // Byte order, not Swift's String order: "é" (C3 A9) comes after "z", and after "e" + U+0301 + "x"
        // (65 CC 81 78), which Swift's `<` puts after "é".
        #expect(Self.taskError(Self.task(filters: Self.filter(Array("g".utf8), [("z", 2, [1]), ("\u{e9}", 2, [0])]))) == nil)
        #expect(Self.taskError(Self.task(filters: Self.filter(Array("g".utf8), [("e\u{301}x", 2, [1]), ("\u{e9}", 2, [0])]))) == nil)
        #expect(Self.taskError(Self.task(filters: Self.filter(Array("g".utf8), [("\u{e9}", 2, [1]), ("e\u{301}x", 2, [0])])))
            == .invalidValue(field: "filters[0].arguments[1].name", reason: "'e\u{301}x' does not follow '\u{e9}': names go in increasing byte order, once each"))
        // Different bytes, in byte order, but one String: refused, not overwritten.
        #expect(Self.taskError(Self.task(filters: Self.filter(Array("g".utf8), [("e\u{301}", 2, [1]), ("\u{e9}", 2, [0])])))
            == .invalidValue(field: "filters[0].arguments[1].name", reason: "'\u{e9}' is canonically equivalent to an earlier name"))
    }

    @Test func invalidSharedRegions() {
        #expect(Self.taskError(Self.task(source: Region(channels: 2))) == .invalidValue(field: "pixels.source", reason: "channels must be 3 or 4, not 2"))
        #expect(Self.taskError(Self.task(output: Region(stride: 7))) == .invalidValue(field: "pixels.output", reason: "row stride 7 is shorter than a row"))
        #expect(Self.taskError(Self.task(source: Region(offset: 2))) == .invalidValue(field: "pixels.source", reason: "byte offset 2 is not a non-negative multiple of 4"))
        #expect(Self.taskError(Self.task(source: Region(offset: 1 << 63))) == .invalidValue(field: "pixels.source.byteOffset", reason: "9223372036854775808 is too large"))
        #expect(Self.taskError(Self.task(source: Region(stride: .max))) == .invalidValue(field: "pixels.source.rowStride", reason: "18446744073709551615 is too large"))
        #expect(Self.taskError(Self.task(source: Region(offset: UInt64(Int.max - 3), rect: (0, 0, 1, 1), channels: 4, stride: 4)))
            == .invalidValue(field: "pixels.source", reason: "the region's end overflows"))
        #expect(Self.taskError(Self.task(source: Region(rect: (0, 0, 2, 1 << 62), stride: 1 << 62)))
            == .invalidValue(field: "pixels.source", reason: "the region's size overflows"))
        #expect(Self.taskError(Self.task(source: Region(rect: (0, 0, 0, 5), stride: 0))) == nil)  // an empty region is fine
        // File samples: 8-bit regions start at any byte, 16-bit ones at an even byte.
        #expect(Self.taskError(Self.task(source: Region(offset: 3, format: 1))) == nil)
        #expect(Self.taskError(Self.task(source: Region(offset: 3, format: 2))) == .invalidValue(field: "pixels.source", reason: "byte offset 3 is not a non-negative multiple of 2"))
        #expect(Self.taskError(Self.task(output: Region(format: 3))) == .badTag(field: "pixels.output.format", tag: 3))
        // The background: three Floats in 0...1.
        #expect(Self.taskError(Self.task(background: [0, 1.5, 0])) == .invalidValue(field: "pixels.background[1]", reason: "1.5 is not a Float in 0...1"))
        #expect(Self.taskError(Self.task(background: [0, 0, .nan])) == .invalidValue(field: "pixels.background[2]", reason: "nan is not a Float in 0...1"))
        #expect(Self.taskError(Self.task(background: [0.1, 0, 0])) == .invalidValue(field: "pixels.background[0]", reason: "0.1 is not a Float in 0...1"))
    }

    /// Every proper prefix of a task's payload, framed intact, is a truncated field.
    @Test func everyPrefixOfATaskIsTruncated() {
        let payload = Self.task(filters: Self.filter(Array("gaussian".utf8), [("sigma", 0, Array(repeating: 0, count: 8)), ("x", 3, [1, 0, 0, 0, 0x61])]))
        #expect(Self.taskError(payload) == nil)
        for n in 0..<payload.count {
            let problem = Self.taskError(Array(payload[..<n]))
            guard case .truncated = problem else {
                Issue.record("prefix of \(n) bytes: \(String(describing: problem))")
                continue
            }
        }
        #expect(Self.taskError(Array(payload[..<8])) == .truncated(field: "imageID"))
        #expect(Self.taskError(Array(payload[..<(8 + 8 + 4 + 3)])) == .truncated(field: "tile.x"))
        #expect(Self.taskError(Array(payload[..<(8 + 8 + 4 + 32 + 32 + 4 + 4 + 8 + 4)])) == .truncated(field: "filters[0].arguments[0].name"))
    }
}
