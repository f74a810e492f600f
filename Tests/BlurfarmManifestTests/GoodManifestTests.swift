import BlurfarmCore
import BlurfarmManifest
import Testing

/// The issue's example, word for word.
let exampleManifest = """
    job: backdrops                     # a name: letters, digits, '-', '_', '.'
    inputs: [photos/**/*.jpg, photos/**/*.png]     # globs, relative to the manifest's folder; ** crosses folders
    exclude: [photos/private/**]       # optional
    outputs:                           # one or more variants, each written for every input
      - name: thumb
        path: out/thumbs/{stem}.webp   # {stem} {ext} {name} {relpath} {job} {variant}
        resize:
          width: 256                   # fit inside, keep aspect; width and/or height
        quality: 80
      - name: backdrop
        path: out/backdrops/{relpath}/{stem}.jpg
        filters:
          - gaussian:
              sigma: 12
          - motion:
              radius: 20
              angle: 30
        edge: clamp
        colour: linear
    tile: 512                          # optional; otherwise the configuration's

    """

@Suite struct GoodManifestTests {
    func decode(_ text: String, file: String = "jobs/backdrops.job") throws -> JobSpec {
        switch JobDecoder.decode(text, file: file, filters: TestCatalogue.all) {
        case .success(let job): return job
        case .failure(let diagnostics):
            Issue.record("unexpected diagnostics:\n\(diagnostics)")
            throw diagnostics
        }
    }

    @Test func theIssuesExampleDecodesToTheExpectedJob() throws {
        let job = try decode(exampleManifest)
        let expected = JobSpec(
            name: "backdrops",
            inputs: ["photos/**/*.jpg", "photos/**/*.png"],
            exclude: ["photos/private/**"],
            outputs: [
                VariantSpec(
                    name: "thumb", pathTemplate: try PathTemplate("out/thumbs/{stem}.webp"), filters: [],
                    edge: .clamp, colour: .gamma, quality: 80, lossless: false, metadata: .keepICC,
                    resize: ResizeSpec(width: 256, height: nil, fit: .inside, upscale: false),
                    background: RGBAColour(red: 255, green: 255, blue: 255)),
                VariantSpec(
                    name: "backdrop", pathTemplate: try PathTemplate("out/backdrops/{relpath}/{stem}.jpg"),
                    filters: [
                        FilterSpec(name: "gaussian", arguments: ["sigma": .number(12)]),
                        // samples has no default: the filter derives it from the radius.
                        FilterSpec(name: "motion", arguments: ["radius": .number(20), "angle": .number(30)]),
                    ],
                    edge: .clamp, colour: .linear, quality: 90, lossless: false, metadata: .keepICC, resize: nil,
                    background: RGBAColour(red: 255, green: 255, blue: 255)),
            ],
            tile: 512, verify: .checksum)
        #expect(job == expected)
        // Field by field too, so a failure says which one.
        #expect(job.outputs.map(\.name) == ["thumb", "backdrop"])
        #expect(job.outputs[1].filters == expected.outputs[1].filters)
        #expect(job.outputs[0].resize == expected.outputs[0].resize)
    }

    @Test func valuesKeepTheirLocations() throws {
        let job = try decode(exampleManifest)
        let file = "jobs/backdrops.job"
        #expect(job.nameLocation == BlurfarmCore.SourceLocation(file: file, line: 1, column: 6))
        #expect(job.inputLocations.map(\.column) == [10, 27])
        #expect(job.excludeLocations == [BlurfarmCore.SourceLocation(file: file, line: 3, column: 11)])
        #expect(job.outputs[0].location == BlurfarmCore.SourceLocation(file: file, line: 5, column: 5))
        #expect(job.outputs[1].pathLocation == BlurfarmCore.SourceLocation(file: file, line: 11, column: 11))
        #expect(job.outputs[1].filterLocations.map { "\($0.line):\($0.column)" } == ["13:9", "15:9"])
    }

    /// `map:` is kept as written (relative to the manifest's folder), with its location, and
    /// is no part of a manifest without it.
    @Test func theOutputMapIsReadWithItsLocation() throws {
        let base = "job: j\ninputs: [a/*.jpg]\noutputs:\n  - name: v\n    path: out/{stem}.jpg\n"
        let job = try JobDecoder.decode(base + "map: '../site/images #1.json'\n", file: "m.job", filters: TestCatalogue.all).get()
        #expect(job.map == "../site/images #1.json")
        #expect(job.mapLocation == BlurfarmCore.SourceLocation(file: "m.job", line: 6, column: 6))
        let without = try JobDecoder.decode(base, file: "n.job", filters: TestCatalogue.all).get()
        #expect(without.map == nil && without.mapLocation == nil)
        #expect(without != job)
    }

    @Test func theParserKeepsEveryKeysAndValuesLocation() throws {
        let (node, diagnostics) = ManifestParser.parse("a: 1\nb:\n  - x\n  - [y, 'z']\n", file: "f")
        #expect(diagnostics.isEmpty)
        guard case .map(let entries)? = node?.content else {
            Issue.record("not a map")
            return
        }
        #expect(entries.map(\.key) == ["a", "b"])
        #expect(entries.map { "\($0.keyLocation.line):\($0.keyLocation.column)" } == ["1:1", "2:1"])
        #expect(entries[0].value.location.column == 4)
        guard case .list(let items) = entries[1].value.content, case .list(let inline) = items[1].content else {
            Issue.record("not a list")
            return
        }
        #expect(items.map { "\($0.location.line):\($0.location.column)" } == ["3:5", "4:5"])
        #expect(inline.map { "\($0.location.line):\($0.location.column)" } == ["4:6", "4:9"])
        #expect(inline.map { $0.scalar?.text } == ["y", "z"])
        #expect(inline.map { $0.scalar?.style } == [.plain, .singleQuoted])
    }

    @Test func aByteOrderMarkAtTheStartIsSkipped() throws {
        let plain = try decode(exampleManifest)
        let withMark = JobDecoder.decode([0xEF, 0xBB, 0xBF] + Array(exampleManifest.utf8), file: "f", filters: TestCatalogue.all)
        #expect(try withMark.get() == plain)
        // Columns count from the character after the mark.
        #expect(try withMark.get().nameLocation?.column == 6)
    }

    @Test func crlfLineEndsReadAsLineEnds() throws {
        let plain = try decode(exampleManifest)
        let crlf = exampleManifest.replacingAll("\n", with: "\r\n")
        #expect(crlf.utf8.count > exampleManifest.utf8.count)
        let job = try decode(crlf)
        #expect(job == plain)
        #expect(job.outputs[1].pathLocation?.line == 11)
    }

    @Test func defaultsAreFilledIn() throws {
        let job = try decode("job: j\ninputs: [a/*.jpg]\noutputs:\n  - name: v\n    path: o/{stem}.png\n")
        #expect(job.exclude.isEmpty)
        #expect(job.tile == nil)
        #expect(job.verify == .checksum)
        let v = job.outputs[0]
        #expect(v.filters.isEmpty && v.edge == .clamp && v.colour == .gamma && v.quality == 90)
        #expect(!v.lossless && v.metadata == .keepICC && v.resize == nil && v.background == .white)
        #expect(v.effort == nil && !v.optimizeCoding && v.formatSettings.isEmpty && v.formats.isEmpty)
        #expect(!v.progressive && v.subsampling == .auto)
        let resized = try decode(
            "job: j\ninputs: [a/*.jpg]\noutputs:\n  - name: v\n    path: o/{stem}.jpg\n    resize:\n      width: 8\n")
        #expect(resized.outputs[0].resize == ResizeSpec(width: 8, height: nil, fit: .inside, upscale: false))
        #expect(resized.outputs[0].resize?.crop == .centre && resized.outputs[0].resize?.sharpen == nil)
    }

    /// `.avif` is a known extension; where the libvips in use cannot write it, the CLI's
    /// loading refuses each such variant at its `path:` with the writer's reason.
    @Test func unwritableFormatsAreErrorsAtTheirPaths() throws {
        let job = try decode("""
            job: j
            inputs: [a/*.jpg]
            outputs:
              - name: small
                path: o/{stem}.avif
              - name: big
                path: p/{stem}.jpg

            """)
        #expect(job.unwritableOutputs { _ in nil }.isEmpty)
        let problems = job.unwritableOutputs { $0 == .avif ? "AVIF output needs an AV1 encoder" : nil }
        #expect(DiagnosticPrinter.render(problems) == """
            jobs/backdrops.job:5:11: error: output 'small': AVIF output needs an AV1 encoder
            jobs/backdrops.job: 1 error

            """)
    }

    /// The thumbnail keys: crop and sharpen in `resize`, progressive and subsampling for JPEG.
    @Test func thumbnailKeysAreRead() throws {
        let job = try decode("""
            job: j
            inputs: [a/*.jpg]
            outputs:
              - name: t
                path: o/{stem}.jpg
                progressive: true
                subsampling: 4:4:4
                resize:
                  width: 10
                  height: 20
                  fit: cover
                  crop: south-west
                  sharpen: true
              - name: u
                path: p/{stem}.JPEG
                subsampling: 4:2:0
                resize:
                  width: 10
                  height: 20
                  fit: cover
                  crop: attention
                  sharpen: 1.25

            """)
        let (t, u) = (job.outputs[0], job.outputs[1])
        #expect(t.progressive && t.subsampling == .full && !u.progressive && u.subsampling == .halved)
        #expect(t.resize == ResizeSpec(width: 10, height: 20, fit: .cover, crop: .southWest, sharpen: 0.5))
        #expect(u.resize == ResizeSpec(width: 10, height: 20, fit: .cover, crop: .attention, sharpen: 1.25))
        let printed = ManifestPrinter.print(job)
        #expect(printed.contains("    subsampling: 4:4:4\n"))
        #expect(printed.contains("      crop: south-west\n      upscale: false\n      sharpen: 0.5\n"))
    }

    @Test func everyKeyIsRead() throws {
        let job = try decode("""
            job: all.keys_1
            inputs:
              - 'a/*.jpg'
              - "b/\\u{e9}t\\u{E9}/*.png"
            exclude: []
            outputs:
            - name: w
              path: 'o/{job}/{variant}/{name}-{ext}.WEBP'
              filters:
                - gaussian
                - vignette:
                    strength: 0.5
                    shape: oval
                    label: 12
                    mirrored: true
              edge: grow
              colour: linear
              quality: 1
              lossless: true
              strip: true
              resize:
                width: 10
                height: 20
                fit: exact
                upscale: true
              background: "#1A2b3c"
            tile: 0
            verify: untiled

            """)
        #expect(job.name == "all.keys_1")
        #expect(job.inputs == ["a/*.jpg", "b/\u{e9}t\u{e9}/*.png"])
        let v = job.outputs[0]
        #expect(v.filters == [
            FilterSpec(name: "gaussian", arguments: ["sigma": .number(10)]),
            FilterSpec(name: "vignette", arguments: [
                "strength": .number(0.5), "shape": .string("oval"), "label": .string("12"), "mirrored": .boolean(true),
            ]),
        ])
        #expect(v.edge == .grow && v.colour == .linear && v.quality == 1 && v.lossless && v.metadata == .keepICC)
        #expect(v.resize == ResizeSpec(width: 10, height: 20, fit: .exact, upscale: true))
        #expect(v.background == RGBAColour(red: 0x1A, green: 0x2B, blue: 0x3C))
        #expect(job.tile == 0 && job.verify == .untiled)
    }

    @Test func namesThatLookLikeNumbersAreText() throws {
        let job = try decode("job: 2024\ninputs: [a/*.jpg]\noutputs:\n  - name: true\n    path: o/{stem}.png\n")
        #expect(job.name == "2024")
        #expect(job.outputs[0].name == "true")
    }

    @Test func hashInsideAWordIsNotAComment() throws {
        let job = try decode("job: j\ninputs: [a#1/*.jpg] # comment\noutputs:\n  - name: v\n    path: o/{stem}#2.png\n")
        #expect(job.inputs == ["a#1/*.jpg"])
        #expect(job.outputs[0].pathTemplate.text == "o/{stem}#2.png")
    }

    @Test func theMemoryLimitIsBytesWithOrWithoutAUnit() throws {
        for (text, bytes) in [
            ("8000000000", 8_000_000_000), ("16GB", 16_000_000_000), ("12GiB", 12 << 30), ("512M", 512_000_000),
            ("1.5 GiB", 3 << 29), ("64kb", 64_000), ("100B", 100), ("1TiB", 1 << 40),
        ] {
            #expect(FarmConfiguration.byteCount(text) == bytes, "\(text)")
            #expect(try ConfigurationDecoder.decode("memory-limit: \(text)\n", file: "c.conf").get().memoryLimit == bytes)
        }
        for text in ["", "GB", "0", "0.1B", "-5GB", "lots", "1e9", "16 G B", "9999999TB", "99999999999999999999", "1,5GB"] {
            #expect(FarmConfiguration.byteCount(text) == nil, "\(text)")
        }
    }

    @Test func theConfigurationDecodesWithDefaultsAndResolvedFolders() throws {
        let c = try ConfigurationDecoder.decode("tile: 256\nstate: var/blurfarm\nplugin-folders: [plugins, /opt/bf]\n", file: "etc/bf/blurfarm.conf").get()
        #expect(c.workers == nil)
        #expect(c.tile == 256)
        #expect(c.decodedImages == 2 && c.pixelLimit == 1 << 30 && c.memoryLimit == nil && c.retries == 3)
        #expect(c.heartbeatTimeout == 10 && c.taskTimeout == nil)
        #expect(c.reportsKept == 10)
        #expect(try ConfigurationDecoder.decode("reports-kept: 1\n", file: "c.conf").get().reportsKept == 1)
        #expect(c.jobsKept == 10)
        #expect(try ConfigurationDecoder.decode("jobs-kept: 3\n", file: "c.conf").get().jobsKept == 3)
        #expect(c.state == "etc/bf/var/blurfarm")
        #expect(c.pluginFolders == ["etc/bf/plugins", "/opt/bf"])
        // {build} is kept for the command line, which knows the executable's folder.
        let build = try ConfigurationDecoder.decode("plugin-folders: [\"{build}\", p]\n", file: "etc/bf.conf").get()
        #expect(build.pluginFolders == ["{build}", "etc/p"])
        #expect(build.pluginFolders(executableFolder: "/x/debug") == ["/x/debug", "etc/p"])
        let empty = try ConfigurationDecoder.decode("# nothing\n", file: "blurfarm.conf").get()
        #expect(empty == FarmConfiguration() && empty.state == nil)
    }

    @Test func theShippedConfigurationIsValid() throws {
        let here = #filePath
        let root = here[..<here.range(of: "/Tests/")!.lowerBound]
        let path = root + "/config/blurfarm.conf"
        let c = try ConfigurationDecoder.decode(fileAtPath: String(path)).get()
        #expect(c.tile == FarmConfiguration.defaultTile)
        // No state folder in the checkout: the user's.
        #expect(c.state == nil)
    }

    @Test func withoutAStateFolderTheUsersIsUsedAsXDGSays() {
        let none = FarmConfiguration()
        #expect(none.stateFolder(xdgStateHome: "/x/state", home: "/home/me") == "/x/state/blurfarm")
        #expect(none.stateFolder(xdgStateHome: nil, home: "/home/me") == "/home/me/.local/state/blurfarm")
        // Empty or relative: ignored, as the XDG Base Directory specification says.
        #expect(none.stateFolder(xdgStateHome: "", home: "/home/me/") == "/home/me/.local/state/blurfarm")
        #expect(none.stateFolder(xdgStateHome: "rel", home: "/root") == "/root/.local/state/blurfarm")
        let given = FarmConfiguration(state: "/srv/state")
        #expect(given.stateFolder(xdgStateHome: "/x/state", home: "/home/me") == "/srv/state")
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
