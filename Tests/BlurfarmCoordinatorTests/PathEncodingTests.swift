import BlurfarmCore
import BlurfarmSystem
import Testing

/// File names are bytes; ``PathEncoding`` carries them in strings and gives them back exactly.
@Suite struct PathEncodingTests {
    /// Random names, most of their bytes above 0x7F (broken and valid UTF-8 sequences, the
    /// escapes' own UTF-8 EF 9E/9F xx): every name that is not ambiguous comes back byte for
    /// byte, and is shown as its bytes are.
    @Test func everyNameThatIsNotAmbiguousRoundTrips() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt8 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        var ambiguous = 0
        for _ in 0..<5_000 {
            let count = Int(next() % 12) + 1
            let name: [UInt8] = (0..<count).map { _ -> UInt8 in
                switch next() % 4 {
                case 0: return UInt8(ascii: "a")
                case 1: return [0xEF, 0x9E, 0x9F, 0xC3][Int(next() % 4)]
                default: return next() | 0x80
                }
            }
            let (text, isAmbiguous) = PathEncoding.decode(name)
            if isAmbiguous {
                ambiguous += 1
                continue
            }
            #expect(PathEncoding.bytes(text) == name, "\(name)")
            #expect(PathEncoding.isUTF8(text) == (String(validating: name, as: UTF8.self) != nil), "\(name)")
            #expect(ShownName.of(text) == ShownName.of(bytes: name), "\(name)")
            #expect(PathEncoding.withCString(text) { pointer in
                (0..<name.count).allSatisfy { UInt8(bitPattern: pointer[$0]) == name[$0] } && pointer[name.count] == 0
            })
        }
        #expect(ambiguous > 0)
    }

    @Test func aLatin1ByteIsCarriedAsItsPrivateUseCharacterAndShownInHex() {
        let (text, ambiguous) = PathEncoding.decode(Array("caf".utf8) + [0xE9] + Array(".png".utf8))
        #expect(text == "caf\u{F7E9}.png" && !ambiguous)
        #expect(ShownName.of(text) == "caf\\xE9.png")
        #expect(PathEncoding.decode(Array("caf\u{F7E9}.png".utf8)).ambiguous)
        #expect(ShownName.of(bytes: Array("caf\u{F7E9}.png".utf8)) == "caf\\u{F7E9}.png")
    }
}
