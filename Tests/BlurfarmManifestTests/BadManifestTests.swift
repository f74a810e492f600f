import BlurfarmCore
import BlurfarmManifest
import Testing

/// Halide's `test/error` idea: a folder of files that must fail, each with the exact
/// diagnostics it must print (`NAME.job` or `NAME.conf` beside `NAME.expected`).
@Suite struct BadManifestTests {
    static let folder: String = {
        let here = #filePath
        return String(here[..<here.lastIndex(of: "/")!]) + "/bad-manifests"
    }()

    /// The fixture inputs, by file name.
    static let fixtures: [String] = {
        let names = (try? listFolder(folder)) ?? []
        return names.filter { $0.hasSuffix(".job") || $0.hasSuffix(".conf") }.sorted()
    }()

    /// Decodes a fixture as its extension says and renders what it prints.
    static func render(_ bytes: [UInt8], file: String) -> String {
        let diagnostics: Diagnostics
        if file.hasSuffix(".conf") {
            switch ConfigurationDecoder.decode(bytes, file: file) {
            case .success(let c): return "unexpectedly valid: \(c)\n"
            case .failure(let d): diagnostics = d
            }
        } else {
            switch JobDecoder.decode(bytes, file: file, filters: TestCatalogue.all) {
            case .success(let job): return "unexpectedly valid:\n" + ManifestPrinter.print(job)
            case .failure(let d): diagnostics = d
            }
        }
        return DiagnosticPrinter.render(diagnostics)
    }

    @Test func theFolderHoldsAtLeastThirtyCasesEachWithItsExpectation() throws {
        #expect(Self.fixtures.count >= 30)
        let names = try listFolder(Self.folder)
        for fixture in Self.fixtures {
            let stem = fixture[..<fixture.lastIndex(of: ".")!]
            #expect(names.contains(stem + ".expected"), "no \(stem).expected")
        }
        for expected in names where expected.hasSuffix(".expected") {
            let stem = expected.dropLast(".expected".count)
            #expect(Self.fixtures.contains { $0.hasPrefix(stem + ".") }, "\(expected) has no input")
        }
    }

    @Test(arguments: fixtures)
    func printsExactlyTheExpectedDiagnostics(_ fixture: String) throws {
        let bytes = try readFile(Self.folder + "/" + fixture)
        let expected = String(
            decoding: try readFile(Self.folder + "/" + fixture[..<fixture.lastIndex(of: ".")!] + ".expected"),
            as: UTF8.self)
        let actual = Self.render(bytes, file: "bad-manifests/" + fixture)
        #expect(actual == expected)
        #expect(expected.hasSuffix(" error\n") || expected.hasSuffix(" errors\n"))
    }

    /// The 2 MiB case is made here rather than committed.
    @Test func aFileOverOneMebibyteIsRefusedWithoutBeingParsed() {
        var text = "job: big\ninputs: [a/*.jpg]\noutputs:\n  - name: v\n    path: out/{stem}.jpg\n"
        let filler = "# " + String(repeating: "x", count: 100) + "\n"
        while text.utf8.count < 2 << 20 { text += filler }
        let bytes = Array(text.utf8.prefix(2 << 20))
        #expect(bytes.count == 2_097_152)
        #expect(Self.render(bytes, file: "big.job") == """
            big.job:1:1: error: file is larger than the limit of 1 MiB (1048576 bytes)
            big.job: 1 error

            """)
        // One byte under the limit is read.
        let fits = Array(bytes.prefix(ManifestLimits.maximumBytes))
        #expect(Self.render(fits, file: "fits.job").hasPrefix("unexpectedly valid"))
    }

    @Test func aFileThatCannotBeReadIsOneErrorNamingIt() {
        let result = JobDecoder.decode(fileAtPath: Self.folder + "/no-such-file.job", filters: [])
        guard case .failure(let diagnostics) = result else {
            Issue.record("a missing file decoded")
            return
        }
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.description.hasPrefix("error: cannot read '") == true)
        #expect(diagnostics.first?.description.hasSuffix("no-such-file.job': No such file or directory") == true)
    }
}
