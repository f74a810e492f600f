import BlurfarmCore
import BlurfarmWire
import CXXHash
import PropertyBased
import Testing

/// Messages come back from their frames exactly, and the frames have the documented layout.
@Suite struct RoundTripTests {
    static let nanFloats: [Float] = [
        Float(bitPattern: 0x7FC0_0000), Float(bitPattern: 0x7FC0_0001), Float(bitPattern: 0xFFFF_FFFF),
        Float(bitPattern: 0x7F80_0001),  // signalling NaN
        -0.0, 0.0, .infinity, -.infinity, .leastNonzeroMagnitude, -.greatestFiniteMagnitude, 0.5, 1,
    ]

    /// At least one message of every type, with awkward values.
    static let awkward: [WireMessage] = [
        .hello(Hello(workerID: 0, pid: 0)),
        .hello(Hello(workerID: .max, protocolVersion: .max, pid: .min)),
        .ready,
        .task(TaskMessage(
            taskID: .max, imageID: 0, attempt: .max, tile: Rect(x: -7, y: -3, width: 0, height: 5),
            image: Rect(x: Int.min, y: Int.max - 1, width: 1, height: 1),
            filters: [
                FilterSpec(name: "", arguments: [:]),
                FilterSpec(name: "gaussian", arguments: ["sigma": .number(-0.0), "": .string(""), "é": .integer(.min)]),
                FilterSpec(name: "plugin.\u{1F600}\u{0}", arguments: [
                    "b": .boolean(false), "a": .boolean(true), "Z": .integer(.max), "label": .string("\u{301}e\u{0}\n\u{10FFFF}"),
                    "huge": .number(.greatestFiniteMagnitude), "tiny": .number(.leastNonzeroMagnitude),
                    "inf": .number(-.infinity), "\u{e9}": .integer(1), "e\u{301}x": .integer(2),
                ]),
            ],
            edge: .grow, colour: .linear,
            pixels: .shared(
                source: SharedRegion(segment: .max, file: FileIdentity(device: .max, inode: .max), byteOffset: Int.max - 3 - 16 * 4, rect: Rect(x: -9, y: -9, width: 4, height: 1), channels: 4, rowStride: 16),
                output: SharedRegion(segment: 0, file: FileIdentity(device: 0, inode: 0), byteOffset: 0, rect: Rect(x: 0, y: 0, width: 0, height: 0), channels: 3, rowStride: 0)))),
        .task(TaskMessage(
            taskID: 2, imageID: 3, attempt: 1, tile: Rect(width: 2, height: 2), image: Rect(width: 2, height: 2), filters: [],
            edge: .clamp, colour: .gamma,
            regions: RegionMask(regions: [
                Region(
                    shape: .ellipse, x: .pixels(-.greatestFiniteMagnitude), y: .percent(-0.0), width: .pixels(.leastNonzeroMagnitude),
                    height: .percent(.greatestFiniteMagnitude), cornerRadius: 0, feather: .greatestFiniteMagnitude)
            ]),
            pixels: .shared(
                source: SharedRegion(segment: 1, file: FileIdentity(device: 1, inode: 1 << 40), byteOffset: 7, rect: Rect(width: 2, height: 2), channels: 3, format: .uint8, rowStride: 6),
                output: SharedRegion(segment: 2, file: FileIdentity(device: 2, inode: 3), byteOffset: 10, rect: Rect(width: 2, height: 2), channels: 4, format: .uint16, rowStride: 9),
                background: SIMD3(1, 0.5, 0.125)))),
        .task(TaskMessage(
            taskID: 0, imageID: .max, attempt: 1, tile: Rect(x: 0, y: 0, width: 2, height: 2),
            image: Rect(x: 0, y: 0, width: 3, height: 2), filters: [], edge: .clamp, colour: .gamma,
            pixels: .inline(source: InlinePixels(rect: Rect(x: -1, y: 0, width: 3, height: 1), channels: 4, samples: nanFloats)))),
        .result(TaskResult(taskID: 1, checksum: .max, elapsedNanoseconds: 0)),
        .result(TaskResult(
            taskID: .max, checksum: 0, elapsedNanoseconds: .max,
            output: InlinePixels(rect: Rect(x: -2, y: -2, width: 2, height: 2), channels: 3, samples: nanFloats))),
        .result(TaskResult(
            taskID: 5, checksum: 5, elapsedNanoseconds: 5,
            output: InlinePixels(rect: Rect(x: 3, y: 3, width: 0, height: 9), channels: 4, samples: []))),
        .failure(TaskFailure(taskID: 0, message: "")),
        .failure(TaskFailure(taskID: .max, message: "plugin 'vignette' failed: ✗ \u{1F600} \u{0} \"quoted\"\nsecond line")),
        .heartbeat(taskID: nil),
        .heartbeat(taskID: 0),
        .heartbeat(taskID: .max),
        .shutdown,
        .cancel(taskID: 0),
        .cancel(taskID: .max),
        .imageTask(ImageTask(
            taskID: .max, imageID: 0, attempt: 1,
            input: TaskInput(path: "/proc/1/fd/9", name: "photos/\u{e9}t\u{e9} [1].jpg", pixelLimit: Int.max, memoryLimit: 0),
            decode: .whole, outputs: [])),
        .imageTask(ImageTask(
            taskID: 1, imageID: .max, attempt: .max,
            input: TaskInput(path: "", name: "\u{0}\n", pixelLimit: 1 << 30, memoryLimit: 1 << 33),
            decode: .thumbnail(width: nil, height: 1, fit: .cover, upscale: true, crop: .northEast, sharpen: -.infinity),
            outputs: [
                ImageTaskOutput(
                    path: "out/a.webp", decoded: 0,
                    filters: [FilterSpec(name: "gaussian", arguments: ["sigma": .number(-0.0), "x": .string("\u{1F600}")])],
                    edge: .grow, colour: .linear, tileSize: 0,
                    encoding: EncodeOptions(
                        quality: 100, lossless: true, metadata: .keepICC, background: SIMD3(1, 0, 0.5), bitDepth: 16,
                        progressive: true, subsampling: .halved),
                    verifyDecode: true)
            ])),
        .imageTask(ImageTask(
            taskID: 2, imageID: 3, attempt: 1, input: TaskInput(path: "i", name: "i", pixelLimit: 1, memoryLimit: 1),
            decode: .thumbnails(widths: [1, 320, 4_000_000_000], upscale: false, sharpen: nil),
            outputs: [
                ImageTaskOutput(
                    path: "s.jpg", decoded: 2, filters: [], edge: .clamp, colour: .gamma, tileSize: 256,
                    encoding: EncodeOptions(
                        quality: 1, lossless: false, metadata: .keep, background: .zero, bitDepth: nil,
                        progressive: false, subsampling: .auto),
                    verifyDecode: false)
            ])),
        .imageResult(ImageResult(taskID: 0, decodeNanoseconds: .max, outputs: [])),
        .imageResult(ImageResult(
            taskID: .max, decodeNanoseconds: 0,
            outputs: [
                .encoded(EncodedOutput(
                    bytes: [0xFF, 0xD8, 0, 0xFF, 0xD9], width: 0, height: Int(UInt32.max), bitDepth: 16, hasAlpha: true,
                    checksum: .max, tiles: 0, bands: 3, filterNanoseconds: .max, encodeNanoseconds: 0)),
                .encoded(EncodedOutput(
                    bytes: [], width: 1, height: 1, bitDepth: 8, hasAlpha: false, checksum: 0, tiles: 1, bands: 0,
                    filterNanoseconds: 0, encodeNanoseconds: .max)),
                .failed(ImageOutputFailure(kind: .decode, code: "decodeFailed", path: "a.jpg", message: "VipsJpeg: \u{0}")),
                .failed(ImageOutputFailure(kind: .tooLarge, code: nil, path: nil, message: "")),
            ])),
        .detectionTask(DetectionTask(
            taskID: .max, imageID: 0, attempt: .max,
            input: TaskInput(path: "/proc/1/fd/9", name: "photos/\u{e9}t\u{e9} [1].jpg", pixelLimit: Int.max, memoryLimit: 0),
            detector: "faces", modelFolder: "", identity: "centerface sha256=\u{0}",
            threads: Int(UInt32.max), schedule: .standard)),
        .detectionTask(DetectionTask(
            taskID: 0, imageID: .max, attempt: 1,
            input: TaskInput(path: "", name: "\n", pixelLimit: 1, memoryLimit: 1),
            detector: "",
            modelFolder: "/m", identity: "", threads: 1,
            schedule: DetectionSchedule(wholeSide: 1, smallestFace: 1, detectorSmallest: 1, tileSide: 2, overlap: 1, cutFace: 1))),
        .detectionResult(DetectionResult(taskID: 0, outcome: .found(width: 1, height: Int(UInt32.max), boxes: []))),
        .detectionResult(DetectionResult(
            taskID: .max,
            outcome: .found(
                width: 6000, height: 4000,
                boxes: [
                    DetectedBox(x: -0.0, y: -1e300, width: .leastNonzeroMagnitude, height: 1e300, score: 0),
                    DetectedBox(x: 5999.5, y: 0, width: 20, height: 24, score: 1),
                ]))),
        .detectionResult(DetectionResult(
            taskID: 7, outcome: .failed(DetectionFailure(kind: .decode, code: "decodeFailed", message: "VipsJpeg: \u{0}")))),
        .detectionResult(DetectionResult(taskID: 8, outcome: .failed(DetectionFailure(kind: .detector, code: nil, message: "")))),
    ]

    @Test func awkwardMessagesCoverEveryType() {
        #expect(Set(Self.awkward.map(\.type)) == Set(WireMessageType.allCases))
    }

    @Test(arguments: awkward)
    func everyMessageTypeRoundTrips(_ message: WireMessage) throws {
        let bytes = try FrameEncoder.encode(message)
        var decoder = FrameDecoder()
        let (messages, error) = decodeAll(bytes, decoder: &decoder)
        #expect(error == nil)
        #expect(messages == [message])
        #expect(decoder.bufferedByteCount == 0)
        // The encoding is canonical: the decoded message encodes to the same bytes.
        #expect(try FrameEncoder.encode(messages.first ?? .ready) == bytes)
    }

    @Test func nanPixelsKeepTheirBits() throws {
        let pixels = InlinePixels(rect: Rect(x: 0, y: 0, width: 3, height: 1), channels: 4, samples: Self.nanFloats)
        var decoder = FrameDecoder()
        let (messages, _) = decodeAll(try FrameEncoder.encode(.result(TaskResult(taskID: 1, checksum: 2, elapsedNanoseconds: 3, output: pixels))), decoder: &decoder)
        guard case .result(let result) = messages.first, let output = result.output else {
            Issue.record("no result: \(messages)")
            return
        }
        #expect(output.samples.map(\.bitPattern) == Self.nanFloats.map(\.bitPattern))
    }

    @Test func nanParametersKeepTheirBits() throws {
        let nan = Double(bitPattern: 0x7FF8_0000_DEAD_BEEF), signalling = Double(bitPattern: 0xFFF0_0000_0000_0001)
        let task = TaskMessage(
            taskID: 1, imageID: 2, attempt: 1, tile: Rect(width: 1, height: 1), image: Rect(width: 1, height: 1),
            filters: [FilterSpec(name: "f", arguments: ["n": .number(nan), "s": .number(signalling), "z": .number(-0.0)])],
            edge: .mirror, colour: .gamma,
            pixels: .shared(
                source: SharedRegion(segment: 1, file: FileIdentity(device: 5, inode: 6), byteOffset: 0, rect: Rect(width: 1, height: 1), channels: 4, rowStride: 4),
                output: SharedRegion(segment: 2, file: FileIdentity(device: 5, inode: 7), byteOffset: 64, rect: Rect(width: 1, height: 1), channels: 4, rowStride: 4)))
        var decoder = FrameDecoder()
        let (messages, _) = decodeAll(try FrameEncoder.encode(.task(task)), decoder: &decoder)
        guard case .task(let decoded) = messages.first else {
            Issue.record("no task: \(messages)")
            return
        }
        #expect(decoded.filters[0].arguments["n"].flatMap { if case .number(let v) = $0 { v.bitPattern } else { nil } } == nan.bitPattern)
        #expect(decoded.filters[0].arguments["s"].flatMap { if case .number(let v) = $0 { v.bitPattern } else { nil } } == signalling.bitPattern)
        #expect(decoded.filters[0].arguments["z"].flatMap { if case .number(let v) = $0 { v.bitPattern } else { nil } } == (-0.0).bitPattern)
        #expect(sameBits(.task(decoded), .task(task)))
    }

    @Test func randomMessagesRoundTripOneByOne() async {
        await propertyCheck(count: 300, input: Random.messages) { messages in
            for message in messages {
                var decoder = FrameDecoder()
                let bytes = encoded(message)
                let (decoded, error) = decodeAll(bytes, decoder: &decoder)
                #expect(error == nil)
                #expect(sameBits(decoded, [message]), "\(message)")
                #expect(encoded(decoded.first ?? .ready) == bytes)
            }
        }
    }

    // MARK: The layout, byte for byte

    /// The reference checksum is XXH3-64 with seed 0 (xxHash's published value for no bytes,
    /// 0x2D06800538D394C2), so the comparisons below mean something; and it keeps the values it
    /// has (libxxhash 0.8.1's, one input for each of XXH3's code paths: up to 16 bytes, 128,
    /// 240, and more), so a change of function, seed or half would be caught.
    @Test func referenceChecksumHasXXHashsPublishedValue() {
        #expect(referenceChecksum([]) == 0x38D3_94C2)
        #expect(XXH3_64bits(nil, 0) == 0x2D06_8005_38D3_94C2)
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
        #expect([12, 100, 200, 1000].map { referenceChecksum(bytes[0..<$0]) } == [0xE0CC_3199, 0xF0D7_8C9F, 0x5327_BF5B, 0x97BD_9E82])
    }

    @Test func readyFrameIsHeaderAndChecksum() throws {
        let bytes = try FrameEncoder.encode(.ready)
        let header: [UInt8] = [0x42, 0x46, 0x57, 0x31, 11, 0, 2, 0, 0, 0, 0, 0]
        #expect(bytes.count == 16)
        #expect(Array(bytes[0..<12]) == header)
        let sum = referenceChecksum(header)
        #expect(Array(bytes[12...]) == [UInt8(sum & 0xFF), UInt8(sum >> 8 & 0xFF), UInt8(sum >> 16 & 0xFF), UInt8(sum >> 24)])
        #expect(sum == 0xD2B6_5EB9)  // the whole frame, pinned
    }

    @Test func cancelFrameIsLittleEndian() throws {
        let bytes = try FrameEncoder.encode(.cancel(taskID: 0x0102_0304_0506_0708))
        #expect(Array(bytes[0..<20]) == [0x42, 0x46, 0x57, 0x31, 11, 0, 8, 0, 8, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1])
        #expect(bytes.count == 24)
    }

    /// The checksum at the end of every frame is that of everything before it.
    @Test func everyFrameEndsWithTheChecksumOfHeaderAndPayload() async {
        await propertyCheck(count: 300, input: Random.messages) { messages in
            for message in messages {
                let bytes = encoded(message)
                let n = bytes.count
                let trailer = UInt32(bytes[n - 4]) | UInt32(bytes[n - 3]) << 8 | UInt32(bytes[n - 2]) << 16 | UInt32(bytes[n - 1]) << 24
                #expect(trailer == referenceChecksum(bytes[0..<n - 4]))
                let length = Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
                #expect(length == n - 16)
                #expect(Int(bytes[6]) | Int(bytes[7]) << 8 == Int(message.type.rawValue))
            }
        }
    }

    /// Each message type's payload, written by hand from docs/protocol.md, is what the encoder writes.
    @Test func payloadsFollowTheDocumentedLayout() throws {
        var hello = Bytes()
        hello.u32(7)
        hello.u16(11)  // the protocol version
        hello.i32(-2)
        #expect(try FrameEncoder.encode(.hello(Hello(workerID: 7, pid: -2))) == frame(type: 1, payload: hello.bytes))

        #expect(try FrameEncoder.encode(.ready) == frame(type: 2, payload: []))
        #expect(try FrameEncoder.encode(.shutdown) == frame(type: 7, payload: []))

        var task = Bytes()
        task.u64(11)  // taskID
        task.u64(22)  // imageID
        task.u32(2)  // attempt
        task.rect(-4, 8, 16, 32)  // tile
        task.rect(0, 0, 100, 50)  // image
        task.u32(2)  // two filters
        task.string("gaussian")
        task.u32(1)
        task.string("sigma")
        task.u8(0)
        task.u64((2.5).bitPattern)
        task.u32(1)  // the gaussian's own regions: one ellipse in pixels, inverted
        task.u8(1)
        for v in [1.0, 2, 3, 4] {
            task.u8(0)
            task.u64(v.bitPattern)
        }
        task.u64(Double(0).bitPattern)
        task.u64(Double(1.5).bitPattern)
        task.u8(1)  // inverted
        task.u8(0)  // blended
        task.string("p")
        task.u32(5)  // arguments in byte order: "B" < "a" < "b" < "e\u{301}x" < "\u{e9}" (Swift's `<` differs)
        task.string("B")
        task.u8(1)
        task.i64(-3)
        task.string("a")
        task.u8(2)
        task.u8(1)
        task.string("b")
        task.u8(3)
        task.string("x\u{e9}")
        task.string("e\u{301}x")
        task.u8(1)
        task.i64(7)
        task.string("\u{e9}")
        task.u8(2)
        task.u8(0)
        task.u32(0)  // p applies everywhere
        task.u8(0)
        task.u8(0)
        task.u8(2)  // edge: transparent
        task.u8(1)  // colour: linear
        task.u32(2)  // regions: a rounded rect in pixels, an ellipse in percent
        task.u8(0)
        for v in [10.0, 20, 30, 40] {
            task.u8(0)
            task.u64(v.bitPattern)
        }
        task.u64(Double(6).bitPattern)  // cornerRadius
        task.u64(Double(2).bitPattern)  // feather
        task.u8(1)
        for v in [-5.0, 12.5, 50, 25] {
            task.u8(1)
            task.u64(v.bitPattern)
        }
        task.u64(Double(0).bitPattern)
        task.u64(Double(0.5).bitPattern)
        task.u8(1)  // invert
        task.u8(0)  // the whole image
        task.u8(0)  // shared
        task.u32(3)  // source: segment 3 (device 9, inode 123456789), offset 4096, rect, 4 channels, Float32, stride 400
        task.u64(9)
        task.u64(123_456_789)
        task.u64(4096)
        task.rect(-16, 0, 60, 50)
        task.u8(4)
        task.u8(0)
        task.u64(400)
        task.u32(4)  // output: 3 channels of 16-bit samples
        task.u64(9)
        task.u64(1 << 63)
        task.u64(2)
        task.rect(-4, 8, 16, 32)
        task.u8(3)
        task.u8(2)
        task.u64(48)
        task.u64(Double(0.25).bitPattern)  // background
        task.u64(Double(1).bitPattern)
        task.u64(Double(0).bitPattern)
        let message = WireMessage.task(TaskMessage(
            taskID: 11, imageID: 22, attempt: 2, tile: Rect(x: -4, y: 8, width: 16, height: 32),
            image: Rect(width: 100, height: 50),
            filters: [
                FilterSpec(
                    name: "gaussian", arguments: ["sigma": .number(2.5)],
                    regions: RegionMask(
                        regions: [Region(shape: .ellipse, x: .pixels(1), y: .pixels(2), width: .pixels(3), height: .pixels(4), feather: 1.5)],
                        invert: true)),
                FilterSpec(name: "p", arguments: [
                    "\u{e9}": .boolean(false), "b": .string("x\u{e9}"), "e\u{301}x": .integer(7), "a": .boolean(true), "B": .integer(-3),
                ]),
            ],
            edge: .transparent, colour: .linear,
            regions: RegionMask(
                regions: [
                    Region(x: .pixels(10), y: .pixels(20), width: .pixels(30), height: .pixels(40), cornerRadius: 6, feather: 2),
                    Region(
                        shape: .ellipse, x: .percent(-5), y: .percent(12.5), width: .percent(50), height: .percent(25),
                        feather: 0.5),
                ],
                invert: true),
            pixels: .shared(
                source: SharedRegion(segment: 3, file: FileIdentity(device: 9, inode: 123_456_789), byteOffset: 4096, rect: Rect(x: -16, y: 0, width: 60, height: 50), channels: 4, rowStride: 400),
                output: SharedRegion(
                    segment: 4, file: FileIdentity(device: 9, inode: 1 << 63), byteOffset: 2, rect: Rect(x: -4, y: 8, width: 16, height: 32), channels: 3, format: .uint16,
                    rowStride: 48),
                background: SIMD3(0.25, 1, 0))))
        #expect(try FrameEncoder.encode(message) == frame(type: 3, payload: task.bytes))

        var inline = Bytes()
        inline.u64(1)
        inline.u64(2)
        inline.u32(1)
        inline.rect(0, 0, 1, 1)
        inline.rect(0, 0, 1, 1)
        inline.u32(0)
        inline.u8(3)  // grow
        inline.u8(0)  // gamma
        inline.u32(0)  // no regions
        inline.u8(0)  // not inverted
        inline.u8(0)  // the whole image
        inline.u8(1)  // inline
        inline.rect(-1, -1, 1, 2)
        inline.u8(3)
        for f: Float in [1, 2, 3, -0.0, .nan, 0.25] { inline.u32(f.bitPattern) }
        #expect(try FrameEncoder.encode(.task(TaskMessage(
            taskID: 1, imageID: 2, attempt: 1, tile: Rect(width: 1, height: 1), image: Rect(width: 1, height: 1),
            filters: [], edge: .grow, colour: .gamma,
            pixels: .inline(source: InlinePixels(
                rect: Rect(x: -1, y: -1, width: 1, height: 2), channels: 3, samples: [1, 2, 3, -0.0, .nan, 0.25])))))
            == frame(type: 3, payload: inline.bytes))

        var result = Bytes()
        result.u64(9)
        result.u64(0xABCD)
        result.u64(1_000_000)
        result.u8(1)
        result.rect(5, 6, 1, 1)
        result.u8(4)
        for f: Float in [0.5, 0.25, 0.125, 1] { result.u32(f.bitPattern) }
        #expect(try FrameEncoder.encode(.result(TaskResult(
            taskID: 9, checksum: 0xABCD, elapsedNanoseconds: 1_000_000,
            output: InlinePixels(rect: Rect(x: 5, y: 6, width: 1, height: 1), channels: 4, samples: [0.5, 0.25, 0.125, 1]))))
            == frame(type: 4, payload: result.bytes))
        var sharedResult = Bytes()
        sharedResult.u64(9)
        sharedResult.u64(1)
        sharedResult.u64(2)
        sharedResult.u8(0)
        #expect(try FrameEncoder.encode(.result(TaskResult(taskID: 9, checksum: 1, elapsedNanoseconds: 2))) == frame(type: 4, payload: sharedResult.bytes))

        var failure = Bytes()
        failure.u64(3)
        failure.string("sigma ∞")
        #expect(try FrameEncoder.encode(.failure(TaskFailure(taskID: 3, message: "sigma ∞"))) == frame(type: 5, payload: failure.bytes))

        #expect(try FrameEncoder.encode(.heartbeat(taskID: nil)) == frame(type: 6, payload: [0]))
        var beat = Bytes()
        beat.u8(1)
        beat.u64(42)
        #expect(try FrameEncoder.encode(.heartbeat(taskID: 42)) == frame(type: 6, payload: beat.bytes))

        var cancel = Bytes()
        cancel.u64(.max)
        #expect(try FrameEncoder.encode(.cancel(taskID: .max)) == frame(type: 8, payload: cancel.bytes))
    }

    /// The whole-image messages, written by hand from ImageTask.swift's layouts.
    @Test func imagePayloadsFollowTheDocumentedLayout() throws {
        var task = Bytes()
        task.u64(5)  // taskID
        task.u64(6)  // imageID
        task.u32(1)  // attempt
        task.string("/proc/9/fd/3")
        task.string("a.jpg")
        task.u64(1000)  // pixelLimit
        task.u64(2000)  // memoryLimit
        task.u8(2)  // thumbnails
        task.u32(2)
        task.u32(320)
        task.u32(640)
        task.u8(0)  // no upscale
        task.u8(1)  // sharpen
        task.u64(Double(0.5).bitPattern)
        task.u32(1)  // one output
        task.string("a-320.jpg")
        task.u32(0)  // decoded
        task.u32(1)  // filters
        task.string("gaussian")
        task.u32(1)
        task.string("sigma")
        task.u8(0)
        task.u64(Double(8).bitPattern)
        task.u32(0)  // the gaussian applies everywhere
        task.u8(0)
        task.u8(0)
        task.u8(0)  // clamp
        task.u8(0)  // gamma
        task.u32(0)  // no regions
        task.u8(0)  // not inverted
        task.u8(0)  // the whole image
        task.u32(256)  // tileSize
        task.u8(85)  // quality
        task.u8(0)  // lossy
        task.string("keep-icc")  // metadata
        for c in [1.0, 1.0, 1.0] { task.u64(c.bitPattern) }
        task.u8(0)  // bit depth chosen by the encoder
        task.u8(0)  // baseline
        task.string("4:2:0")
        task.u8(1)  // effort given:
        task.u8(6)
        task.u8(1)  // optimized coding
        task.u8(0)  // verifyDecode
        let message = WireMessage.imageTask(ImageTask(
            taskID: 5, imageID: 6, attempt: 1,
            input: TaskInput(path: "/proc/9/fd/3", name: "a.jpg", pixelLimit: 1000, memoryLimit: 2000),
            decode: .thumbnails(widths: [320, 640], upscale: false, sharpen: 0.5),
            outputs: [
                ImageTaskOutput(
                    path: "a-320.jpg", decoded: 0, filters: [FilterSpec(name: "gaussian", arguments: ["sigma": .number(8)])],
                    edge: .clamp, colour: .gamma, tileSize: 256,
                    encoding: EncodeOptions(
                        quality: 85, lossless: false, metadata: .keepICC, background: SIMD3(1, 1, 1), bitDepth: nil,
                        progressive: false, subsampling: .halved, effort: 6, optimizeCoding: true),
                    verifyDecode: false)
            ]))
        #expect(try FrameEncoder.encode(message) == frame(type: 9, payload: task.bytes))

        var result = Bytes()
        result.u64(5)  // taskID
        result.u64(1_000_000)  // decodeNanoseconds
        result.u32(2)
        result.u8(0)  // encoded
        result.u32(3)
        result.bytes += [1, 2, 3]
        result.u32(320)
        result.u32(200)
        result.u8(8)
        result.u8(0)
        result.u64(0xABCD)  // checksum
        result.u32(2)  // tiles
        result.u32(9)  // bands
        result.u64(7)
        result.u64(8)
        result.u8(1)  // failed
        result.u8(3)  // encode
        result.u8(1)
        result.string("encodeFailed")
        result.u8(1)
        result.string("b.jpg")
        result.string("too wide")
        #expect(
            try FrameEncoder.encode(.imageResult(ImageResult(
                taskID: 5, decodeNanoseconds: 1_000_000,
                outputs: [
                    .encoded(EncodedOutput(
                        bytes: [1, 2, 3], width: 320, height: 200, bitDepth: 8, hasAlpha: false, checksum: 0xABCD, tiles: 2, bands: 9,
                        filterNanoseconds: 7, encodeNanoseconds: 8)),
                    .failed(ImageOutputFailure(kind: .encode, code: "encodeFailed", path: "b.jpg", message: "too wide")),
                ]))) == frame(type: 10, payload: result.bytes))
    }

    /// The detection messages, written by hand from DetectionTask.swift's layouts.
    @Test func detectionPayloadsFollowTheDocumentedLayout() throws {
        var task = Bytes()
        task.u64(5)  // taskID
        task.u64(6)  // imageID
        task.u32(2)  // attempt
        task.string("/proc/9/fd/3")
        task.string("a.jpg")
        task.u64(1000)  // pixelLimit
        task.u64(2000)  // memoryLimit
        task.string("faces")
        task.string("/models")
        task.string("centerface sha256=ab")
        task.u32(2)  // threads
        for value: UInt32 in [1024, 20, 12, 1536, 128, 24] { task.u32(value) }  // the standard schedule
        #expect(try FrameEncoder.encode(.detectionTask(DetectionTask(
            taskID: 5, imageID: 6, attempt: 2,
            input: TaskInput(path: "/proc/9/fd/3", name: "a.jpg", pixelLimit: 1000, memoryLimit: 2000),
            detector: "faces", modelFolder: "/models", identity: "centerface sha256=ab", threads: 2, schedule: .standard)))
            == frame(type: 11, payload: task.bytes))

        var found = Bytes()
        found.u64(5)
        found.u8(0)  // found
        found.u32(640)
        found.u32(480)
        found.u32(1)  // one box
        for value in [10.5, 20, 30, 40, 0.875] { found.u64(value.bitPattern) }
        #expect(try FrameEncoder.encode(.detectionResult(DetectionResult(
            taskID: 5,
            outcome: .found(width: 640, height: 480, boxes: [DetectedBox(x: 10.5, y: 20, width: 30, height: 40, score: 0.875)]))))
            == frame(type: 12, payload: found.bytes))

        var failed = Bytes()
        failed.u64(5)
        failed.u8(1)  // failed
        failed.u8(0)  // decode
        failed.u8(1)
        failed.string("decodeFailed")
        failed.string("not a JPEG")
        #expect(try FrameEncoder.encode(.detectionResult(DetectionResult(
            taskID: 5, outcome: .failed(DetectionFailure(kind: .decode, code: "decodeFailed", message: "not a JPEG")))))
            == frame(type: 12, payload: failed.bytes))
    }

    /// What no detector gives and no schedule is, refused from the payload: a box without a
    /// size or not finite, a score past 1, a search without a thread, tiles within their overlap.
    @Test func detectionPayloadsOutsideTheirRangesAreRefused() throws {
        for box in [[0.0, 0, 0, 1, 0.5], [0, 0, 1, 1, 1.5], [.nan, 0, 1, 1, 0.5], [0, .infinity, 1, 1, 0.5], [0, 0, 1, 1, -0.1]] {
            var result = Bytes()
            result.u64(1)
            result.u8(0)
            result.u32(10)
            result.u32(10)
            result.u32(1)
            for value in box { result.u64(value.bitPattern) }
            var decoder = FrameDecoder()
            decoder.append(frame(type: 12, payload: result.bytes))
            #expect(throws: WireError.self, "box \(box)") { try decoder.nextMessage() }
        }
        func task(threads: UInt32, schedule: [UInt32]) -> [UInt8] {
            var task = Bytes()
            task.u64(1)
            task.u64(1)
            task.u32(1)
            for text in ["i", "i"] { task.string(text) }
            task.u64(1)
            task.u64(1)
            for text in ["faces", "/m", "id"] { task.string(text) }
            task.u32(threads)
            for value in schedule { task.u32(value) }
            return frame(type: 11, payload: task.bytes)
        }
        for (threads, schedule) in [(0, [1024, 20, 12, 1536, 128, 24]), (1, [1024, 20, 12, 128, 128, 24]), (1, [1024, 20, 30, 1536, 128, 24]), (1, [0, 20, 12, 1536, 128, 24])] as [(UInt32, [UInt32])] {
            var decoder = FrameDecoder()
            decoder.append(task(threads: threads, schedule: schedule))
            #expect(throws: WireError.self, "threads \(threads), schedule \(schedule)") { try decoder.nextMessage() }
        }
        var decoder = FrameDecoder()
        decoder.append(task(threads: 1, schedule: [1024, 20, 12, 1536, 128, 24]))
        #expect(try decoder.nextMessage()?.type == .detectionTask)
    }

    /// A thumbnail output's decoded image must be one of the decode's widths.
    @Test func anImageOutputOfAnImageTheDecodeDoesNotMakeIsRefused() throws {
        var bytes = try FrameEncoder.encode(.imageTask(ImageTask(
            taskID: 1, imageID: 1, attempt: 1,
            input: TaskInput(path: "i", name: "i", pixelLimit: 1, memoryLimit: 1),
            decode: .whole,
            outputs: [
                ImageTaskOutput(
                    path: "o.jpg", decoded: 0, filters: [], edge: .clamp, colour: .gamma, tileSize: 0,
                    encoding: EncodeOptions(
                        quality: 90, lossless: false, metadata: .keep, background: .zero, bitDepth: nil,
                        progressive: false, subsampling: .auto),
                    verifyDecode: false)
            ])))
        // The output's `decoded` field (u32 0) follows its path: made 1.
        Self.patch(&bytes, after: "o.jpg", to: 1)
        var decoder = FrameDecoder()
        let (messages, error) = decodeAll(bytes, decoder: &decoder)
        #expect(messages.isEmpty)
        #expect("\(error.map { "\($0)" } ?? "none")".contains("outputs[0].decoded"))
    }

    /// `frame` with the byte after the first `text` in it set to `value`, its checksum made right
    /// again: a frame whose payload alone is wrong.
    static func patch(_ frame: inout [UInt8], after text: String, to value: UInt8) {
        let bytes = Array(text.utf8)
        let at = (0..<frame.count - bytes.count).first { Array(frame[$0..<$0 + bytes.count]) == bytes }! + bytes.count
        frame[at] = value
        let sum = referenceChecksum(frame[0..<frame.count - 4])
        for k in 0..<4 { frame[frame.count - 4 + k] = UInt8(truncatingIfNeeded: sum >> (8 * k)) }
    }

    /// A fit or a crop the reader does not know is malformed, refused by the decoder.
    @Test func anUnknownFitIsRefused() throws {
        var bytes = try FrameEncoder.encode(.imageTask(ImageTask(
            taskID: 1, imageID: 1, attempt: 1, input: TaskInput(path: "i", name: "i", pixelLimit: 1, memoryLimit: 1),
            decode: .thumbnail(width: 8, height: 8, fit: .cover, upscale: false, crop: .centre, sharpen: nil), outputs: [])))
        Self.patch(&bytes, after: "cove", to: UInt8(ascii: "s"))  // "coves"
        var decoder = FrameDecoder()
        let (messages, error) = decodeAll(bytes, decoder: &decoder)
        #expect(messages.isEmpty)
        #expect("\(error.map { "\($0)" } ?? "none")".contains("decode.fit"))
    }

    // MARK: Size limit

    /// A 2048 × 2048 RGBA Float32 tile fits inline; a larger one is refused when encoding.
    @Test func theLargestInlineTileFitsAndALargerOneIsRefused() throws {
        let side = 2048
        var samples = [Float](repeating: 0.5, count: side * side * 4)
        samples[samples.count - 1] = Float(bitPattern: 0x7FC0_0ABC)
        let big = WireMessage.result(TaskResult(
            taskID: 1, checksum: 2, elapsedNanoseconds: 3,
            output: InlinePixels(rect: Rect(width: side, height: side), channels: 4, samples: samples)))
        let bytes = try FrameEncoder.encode(big)
        #expect(bytes.count <= WireProtocol.maximumFrameSize)
        var decoder = FrameDecoder()
        let (messages, error) = decodeAll(bytes, decoder: &decoder)
        #expect(error == nil)
        #expect(messages == [big])

        let rows = (WireProtocol.maximumFrameSize / (side * 4 * 4)) + 1
        let tooBig = WireMessage.result(TaskResult(
            taskID: 1, checksum: 2, elapsedNanoseconds: 3,
            output: InlinePixels(rect: Rect(width: side, height: rows), channels: 4, samples: [Float](repeating: 0, count: side * rows * 4))))
        #expect(throws: WireError.frameTooLarge(size: 12 + 8 * 3 + 1 + 32 + 1 + side * rows * 16 + 4, maximum: WireProtocol.maximumFrameSize)) {
            try FrameEncoder.encode(tooBig)
        }
    }

    // MARK: Value types

    @Test func inlinePixelsCopyABufferAndBack() {
        let storage = PixelStorage(floatCount: 5 * 3 * 4)
        let whole = PixelBuffer(rect: Rect(x: -1, y: -1, width: 5, height: 3), storage: storage, channels: 4)
        for y in -1..<2 { for x in -1..<4 { whole[x, y] = SIMD4(Float(x), Float(y), 0.5, 1) } }
        let view = whole.view(Rect(x: 0, y: 0, width: 2, height: 2))  // row stride 20, not 8
        let pixels = InlinePixels(view)
        #expect(pixels.rect == view.rect && pixels.channels == 4)
        #expect(pixels.samples == [0, 0, 0.5, 1, 1, 0, 0.5, 1, 0, 1, 0.5, 1, 1, 1, 0.5, 1])
        #expect(pixels.makeBuffer().isBitIdentical(to: view))
        #expect(InlinePixels(pixels.makeBuffer()) == pixels)
    }

    @Test func inlinePixelsCompareBits() {
        let r = Rect(width: 1, height: 1)
        let nan = InlinePixels(rect: r, channels: 3, samples: [.nan, 0, 0])
        #expect(nan == InlinePixels(rect: r, channels: 3, samples: [.nan, 0, 0]))
        #expect(nan != InlinePixels(rect: r, channels: 3, samples: [Float(bitPattern: 0x7FC0_0001), 0, 0]))
        #expect(InlinePixels(rect: r, channels: 3, samples: [0, 0, 0]) != InlinePixels(rect: r, channels: 3, samples: [-0.0, 0, 0]))
    }

    @Test func sharedRegionSpansItsRows() {
        let region = SharedRegion(segment: 1, file: FileIdentity(device: 1, inode: 2), byteOffset: 64, rect: Rect(x: -3, y: 2, width: 10, height: 4), channels: 3, rowStride: 40)
        #expect(region.byteRange == 64..<(64 + (40 * 3 + 30) * 4))
        let empty = SharedRegion(segment: 1, file: FileIdentity(device: 1, inode: 2), byteOffset: 8, rect: Rect(x: 0, y: 0, width: 0, height: 7), channels: 4, rowStride: 0)
        #expect(empty.byteRange == 8..<8)
    }
}
