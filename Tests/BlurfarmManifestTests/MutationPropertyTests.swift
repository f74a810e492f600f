import BlurfarmCore
import BlurfarmManifest
import PropertyBased
import Testing

/// Random byte mutations of valid manifests: the parser never crashes or hangs, and every
/// answer is either a valid job or errors that point inside the file.
@Suite struct MutationPropertyTests {
    static let seeds: [[UInt8]] = [
        Array(exampleManifest.utf8),
        Array("""
            job: "k\\u{e9}y-\\t"
            inputs:
              - 'a/[!x]?/*.jpg'
              - b/**/*.png
            exclude: [a/tmp/**, "b/\\"q\\"/*"]
            outputs:
            - name: w
              path: o/{relpath}/{stem}.webp
              filters:
                - vignette:
                    strength: 0.25
                    label: 'x: #y'
                - gaussian
              lossless: true
              resize:
                height: 7
              background: '#000000'
            verify: decode

            """.utf8),
    ]

    /// Bytes that matter to the grammar, and some that break UTF-8.
    static let interesting: [UInt8] = Array(" \t\r\n-:#\"'\\[]{},&*!|>%?".utf8) + [0x00, 0x7F, 0xC3, 0xEF, 0xBB, 0xBF, 0xFF, 0x80]

    /// Applies mutations described by random words: replace, insert, delete, duplicate a
    /// run, or cut the file short.
    static func mutate(_ seed: [UInt8], with words: [UInt64]) -> [UInt8] {
        var bytes = seed
        for w in words {
            let position = bytes.isEmpty ? 0 : Int((w >> 8) % UInt64(bytes.count))
            let byte = (w >> 40) & 1 == 0 ? interesting[Int((w >> 48) % UInt64(interesting.count))] : UInt8(truncatingIfNeeded: w >> 48)
            switch w % 5 {
            case 0 where !bytes.isEmpty: bytes[position] = byte
            case 1: bytes.insert(byte, at: position)
            case 2 where !bytes.isEmpty: bytes.remove(at: position)
            case 3:
                let length = Int((w >> 32) % 64)
                let run = bytes[position..<min(bytes.count, position + length)]
                bytes.insert(contentsOf: run, at: position)
            default: bytes.removeSubrange(position...)
            }
        }
        return bytes
    }

    /// Line lengths in characters (bytes that are not UTF-8 continuation bytes), an upper
    /// bound on any column the parser may name, plus one for the line's end.
    static func lineLengths(_ bytes: [UInt8]) -> [Int] {
        var lengths = [0]
        for b in bytes {
            if b == 0x0A {
                lengths.append(0)
            } else if b & 0xC0 != 0x80 {
                lengths[lengths.count - 1] += 1
            }
        }
        return lengths
    }

    @Test func mutatedManifestsGiveAJobOrErrorsInsideTheFile() async {
        let input = zip(Gen.int(in: 0...(Self.seeds.count - 1)), Gen<UInt64>.value(in: 0...UInt64.max).array(of: 1...8))
        await propertyCheck(count: 3000, input: input) { seedIndex, words in
            let bytes = Self.mutate(Self.seeds[seedIndex], with: words)
            switch JobDecoder.decode(bytes, file: "m.job", filters: TestCatalogue.all) {
            case .success(let job):
                // A valid job survives printing and parsing again.
                let again = JobDecoder.decode(ManifestPrinter.print(job), file: "p.job", filters: TestCatalogue.all)
                #expect((try? again.get()) == job)
            case .failure(let diagnostics):
                #expect(diagnostics.hasErrors)
                #expect(diagnostics.first?.severity == .error)
                let lengths = Self.lineLengths(bytes)
                for d in diagnostics {
                    guard let l = d.location else {
                        Issue.record("no location: \(d)")
                        continue
                    }
                    #expect(l.file == "m.job")
                    #expect(l.line >= 1 && l.line <= lengths.count, "\(d)")
                    if l.line >= 1 && l.line <= lengths.count {
                        #expect(l.column >= 1 && l.column <= lengths[l.line - 1] + 1, "\(d)")
                    }
                }
            }
        }
    }

    @Test func theMutationsDoBreakManifests() {
        // Guards the property above against mutations too weak to matter.
        var failures = 0
        for k in 0..<200 {
            let words = (0..<3).map { UInt64(k * 7919 + $0) &* 0x9E37_79B9_7F4A_7C15 }
            if case .failure = JobDecoder.decode(Self.mutate(Self.seeds[k % 2], with: words), file: "m", filters: TestCatalogue.all) {
                failures += 1
            }
        }
        #expect(failures > 50)
    }

    @Test func duplicateKeysAreFoundInLargeMaps() {
        var text = ""
        for k in 0..<40_000 { text += "k\(k): \(k)\n" }
        text += "k17: again\nk39999: again\n"
        let diagnostics = ManifestParser.parse(text, file: "wide.job").diagnostics
        #expect(diagnostics.map(\.description) == [
            "wide.job:40001:1: error: duplicate key 'k17'",
            "wide.job:18:1: note: 'k17' first given here",
            "wide.job:40002:1: error: duplicate key 'k39999'",
            "wide.job:40000:1: note: 'k39999' first given here",
        ])
    }

    @Test func deepNestingIsAnErrorNotAStackOverflow() {
        let underKey = "job: j\nx:\n  " + String(repeating: "- ", count: 200_000) + "a\n"
        let dashes = String(repeating: "- ", count: 200_000) + "a\n"
        var indented = ""
        for k in 0..<1_000 { indented += String(repeating: " ", count: k) + "k:\n" }
        for text in [underKey, dashes, indented] {
            let (_, diagnostics) = ManifestParser.parse(text, file: "deep.job")
            #expect(diagnostics.contains { $0.message == "nesting deeper than 64 levels is not supported" })
        }
        // 64 levels are fine.
        let ok = String(repeating: "- ", count: 63) + "a\n"
        #expect(ManifestParser.parse(ok, file: "ok.job").diagnostics.isEmpty)
        let tooDeep = String(repeating: "- ", count: 64) + "a\n"
        #expect(ManifestParser.parse(tooDeep, file: "deep.job").diagnostics.count == 1)
    }
}
