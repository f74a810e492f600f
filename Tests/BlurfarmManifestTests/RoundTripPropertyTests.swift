import BlurfarmCore
import BlurfarmManifest
import PropertyBased
import Testing

/// Generated jobs, printed and parsed again, come back equal; printing is idempotent.
@Suite struct RoundTripPropertyTests {
    /// Characters that need quoting, escapes, or care in some position.
    static let tricky: [Unicode.Scalar] = [
        "a", "b", "Z", "0", "9", " ", "#", ":", "-", "'", "\"", "\\", "\t", "\n", "[", "]", ",", "{", "}", "&",
        "*", "!", "|", ">", "%", "@", "`", "?", ".", "\u{e9}", "\u{1F600}", "\u{7}", "\u{FEFF}", "\u{7F}", "\u{85}",
        "\r", "\u{2028}",
    ]
    static let nameBytes = Array("abcxyzABC0123456789-_.".unicodeScalars)

    static func text<R: RandomNumberGenerator>(from pool: [Unicode.Scalar], count: ClosedRange<Int>, _ rng: inout R) -> String {
        var s = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: count, using: &rng) { s.append(pool.randomElement(using: &rng)!) }
        return String(s)
    }

    static func name<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        // Now and then a name that reads as a number or a boolean.
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return ["2024", "-1", "1.5", "true", "false", "-", "1e5"].randomElement(using: &rng)!
        default: return text(from: nameBytes, count: 1...10, &rng)
        }
    }

    /// A valid glob with literal tricky characters, wildcards, sets, alternatives and `**`.
    static func glob<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        let literals = tricky.filter { !"/*?[\\{}".unicodeScalars.contains($0) }
        var segments: [String] = []
        for k in 0..<Int.random(in: 1...4, using: &rng) {
            if k > 0, Int.random(in: 0..<5, using: &rng) == 0 {
                segments.append("**")
                continue
            }
            var segment = ""
            var lastWasStar = false
            for _ in 0..<Int.random(in: 1...5, using: &rng) {
                switch Int.random(in: 0..<8, using: &rng) {
                case 0 where !lastWasStar:
                    segment += "*"
                    lastWasStar = true
                    continue
                case 1: segment += "?"
                case 2: segment += "[a-c\u{e9}]"
                case 3: segment += "[!x]"
                case 4: segment += "\\*"
                case 5: segment += ["{jpg,JPG}", "{a,\\{,[!x]}", "{,b}", "\\}"].randomElement(using: &rng)!
                default: segment.unicodeScalars.append(literals.randomElement(using: &rng)!)
                }
                lastWasStar = false
            }
            segments.append(segment)
        }
        return segments.joined(separator: "/")
    }

    static func filter<R: RandomNumberGenerator>(_ rng: inout R) -> FilterSpec {
        var arguments: [(name: String, value: ParameterValue)] = []
        let descriptor = TestCatalogue.all.randomElement(using: &rng)!
        func maybe() -> Bool { Bool.random(using: &rng) }
        switch descriptor.name {
        case "gaussian":
            if maybe() {
                arguments.append(("sigma", maybe() ? .number(Double.random(in: 0.001...1000, using: &rng)) : .integer(Int.random(in: 1...1000, using: &rng))))
            }
        case "motion":
            if maybe() { arguments.append(("radius", .number(Double.random(in: 0...2000, using: &rng)))) }
            if maybe() { arguments.append(("angle", .number(Double.random(in: -360...360, using: &rng)))) }
            if maybe() { arguments.append(("samples", .integer(Int.random(in: 1...4000, using: &rng)))) }
        default:
            arguments.append(("strength", .number(Double.random(in: 0...1, using: &rng))))
            if maybe() { arguments.append(("shape", .string(maybe() ? "round" : "oval"))) }
            if maybe() { arguments.append(("label", .string(text(from: tricky, count: 0...12, &rng)))) }
            if maybe() { arguments.append(("mirrored", .boolean(maybe()))) }
        }
        switch descriptor.resolve(arguments) {
        case .success(let spec): return spec
        case .failure(let problems): fatalError("generated bad arguments: \(problems)")
        }
    }

    /// Regions of every shape, in pixels and percent, whole and fractional, some negative.
    /// Now and then a block of settings for a format the variant writes (`extensions`).
    static func formatSettings<R: RandomNumberGenerator>(
        _ extensions: [String], _ rng: inout R
    ) -> [ImageFormat: VariantSpec.FormatSettings] {
        var blocks: [ImageFormat: VariantSpec.FormatSettings] = [:]
        for (_, format) in VariantSpec.formatBlocks where extensions.contains(where: { ImageFormat(extension: $0) == format }) {
            guard Bool.random(using: &rng) else { continue }
            var block = VariantSpec.FormatSettings()
            let keys = VariantSpec.FormatSettings.keys(of: format)
            for key in keys where Bool.random(using: &rng) {
                switch key {
                case "quality": block.quality = Int.random(in: 1...100, using: &rng)
                case "lossless": block.lossless = Bool.random(using: &rng)
                case "progressive": block.progressive = Bool.random(using: &rng)
                case "optimize-coding": block.optimizeCoding = Bool.random(using: &rng)
                case "subsampling": block.subsampling = ChromaSubsampling.allCases.randomElement(using: &rng)!
                case "effort": block.effort = Int.random(in: 0...(format.maximumEffort ?? 0), using: &rng)
                default: break
                }
            }
            // A block holds at least one setting (the language has no empty map).
            if block != VariantSpec.FormatSettings() { blocks[format] = block }
        }
        return blocks
    }

    static func regions<R: RandomNumberGenerator>(_ rng: inout R) -> RegionMask {
        func number(_ range: ClosedRange<Double>) -> Double {
            Bool.random(using: &rng) ? Double.random(in: range, using: &rng).rounded() : Double.random(in: range, using: &rng)
        }
        func length(size: Bool) -> RegionLength {
            let value = size ? max(number(0.001...5000), 0.001) : number(-5000...5000)
            return Bool.random(using: &rng) ? .pixels(value) : .percent(value)
        }
        return RegionMask(
            regions: (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                let shape = Region.Shape.allCases.randomElement(using: &rng)!
                return Region(
                    shape: shape, x: length(size: false), y: length(size: false), width: length(size: true),
                    height: length(size: true), cornerRadius: shape == .rect ? number(0...500) : 0, feather: number(0...100))
            },
            invert: Bool.random(using: &rng))
    }

    static func job<R: RandomNumberGenerator>(_ rng: inout R) -> JobSpec {
        func maybe() -> Bool { Bool.random(using: &rng) }
        var outputs: [VariantSpec] = []
        for k in 0..<Int.random(in: 1...3, using: &rng) {
            let ext = ImageFormat.extensions.randomElement(using: &rng)!
            let literal = text(from: tricky.filter { $0 != "{" && $0 != "}" }, count: 0...6, &rng)
            let file = maybe() ? "{stem}" : "{name}"
            let folder = maybe() ? "{relpath}/" : ""
            // Now and then several sizes, with `{size}` in the path.
            let sizes = Int.random(in: 0..<4, using: &rng) == 0
                ? Array(Set((0..<Int.random(in: 1...4, using: &rng)).map { _ in Int.random(in: 1...5000, using: &rng) })).sorted()
                : []
            // Now and then several formats, `{ext}` standing for each.
            let formats = Int.random(in: 0..<4, using: &rng) == 0
                ? Array(["avif", "webp", "jpg", "png"].shuffled(using: &rng).prefix(Int.random(in: 1...3, using: &rng))) : []
            let path = "out\(k)/\(literal)/\(folder)\(file)\(maybe() ? "-{variant}" : "")\(sizes.isEmpty ? "" : "-{size}")."
                + (formats.isEmpty ? ext : "{ext}")
            var resize: ResizeSpec?
            if !sizes.isEmpty {
                let sharpen: Double? = maybe() ? nil : Double.random(in: 0.01...100, using: &rng)
                resize = ResizeSpec(width: nil, height: nil, upscale: maybe(), sharpen: sharpen, sizes: sizes)
            } else if maybe() {
                let width = maybe() ? Int.random(in: 1...100_000, using: &rng) : nil
                let height = width == nil || maybe() ? Int.random(in: 1...100_000, using: &rng) : nil
                let fit: ResizeSpec.Fit = width != nil && height != nil ? ResizeSpec.Fit.allCases.randomElement(using: &rng)! : .inside
                let crop = fit == .cover ? ResizeSpec.Crop.allCases.randomElement(using: &rng)! : .centre
                let sharpen: Double? = maybe() ? nil : maybe() ? ResizeSpec.defaultSharpenSigma : Double.random(in: 0.01...100, using: &rng)
                resize = ResizeSpec(width: width, height: height, fit: fit, upscale: maybe(), crop: crop, sharpen: sharpen)
            }
            let jpeg = formats.isEmpty ? ImageFormat(extension: ext) == .jpeg : formats.contains("jpg")
            let webp = formats.isEmpty ? ext == "webp" : formats.contains("webp")
            outputs.append(VariantSpec(
                name: name(&rng) + "\(k)", pathTemplate: try! PathTemplate(path), formats: formats,
                filters: (0..<Int.random(in: 0...3, using: &rng)).map { _ in filter(&rng) },
                edge: EdgeRule.allCases.randomElement(using: &rng)!, colour: ColourMode.allCases.randomElement(using: &rng)!,
                quality: Int.random(in: 1...100, using: &rng), lossless: webp && maybe(),
                progressive: jpeg && maybe(), subsampling: jpeg ? ChromaSubsampling.allCases.randomElement(using: &rng)! : .auto,
                metadata: MetadataPolicy.allCases.randomElement(using: &rng)!,
                effort: (webp || (formats.isEmpty ? ext == "avif" : formats.contains("avif"))) && maybe()
                    ? Int.random(in: 0...6, using: &rng) : nil,
                optimizeCoding: jpeg && maybe(),
                formatSettings: formatSettings(formats.isEmpty ? [ext] : formats, &rng),
                resize: resize,
                background: RGBAColour(red: .random(in: 0...255, using: &rng), green: .random(in: 0...255, using: &rng), blue: .random(in: 0...255, using: &rng))))
            // Now and then one filter placed in regions of its own.
            if !outputs[k].filters.isEmpty, outputs[k].edge != .grow, maybe() {
                let i = Int.random(in: outputs[k].filters.indices, using: &rng)
                outputs[k].filters[i].regions = regions(&rng)
            }
            if !outputs[k].filters.isEmpty, outputs[k].edge != .grow, maybe() {
                // Boxes from a file are measured on the whole image: not with a `cover` crop.
                if maybe() || outputs[k].resize?.fit == .cover {
                    outputs[k].regions = regions(&rng)
                    // Now and then only the regions' box (not inverted, not with sizes).
                    if !outputs[k].regions.invert, sizes.isEmpty, maybe() { outputs[k].regions.extent = .box }
                } else if maybe() {
                    // Boxes a detector finds in each input.
                    outputs[k].regions = RegionMask(invert: maybe())
                    outputs[k].detection = RegionDetection(
                        detector: maybe() ? "faces" : "plates-2",
                        threshold: maybe() ? RegionDetection.defaultThreshold : Double(Int.random(in: 1...100, using: &rng)) / 100,
                        grow: maybe() ? RegionDetection.defaultGrow : 1 + Double(Int.random(in: 0...36, using: &rng)) / 4,
                        shape: Region.Shape.allCases.randomElement(using: &rng)!,
                        feather: maybe() ? 0 : Double(Int.random(in: 1...40, using: &rng)) / 4)
                } else {
                    // Boxes from a file beside each input.
                    outputs[k].regions = RegionMask(invert: maybe())
                    outputs[k].regionFile = RegionFile(
                        path: try! PathTemplate(maybe() ? "{stem}.regions.json" : "faces/{name}.json"),
                        shape: Region.Shape.allCases.randomElement(using: &rng)!,
                        feather: maybe() ? 0 : Double(Int.random(in: 1...40, using: &rng)) / 4,
                        missing: RegionFile.Missing.allCases.randomElement(using: &rng)!)
                }
            }
        }
        var job = JobSpec(
            name: name(&rng), inputs: (0..<Int.random(in: 1...3, using: &rng)).map { _ in glob(&rng) },
            exclude: (0..<Int.random(in: 0...2, using: &rng)).map { _ in glob(&rng) }, outputs: outputs,
            tile: maybe() ? Int.random(in: 0...4096, using: &rng) : nil, verify: VerifyMode.allCases.randomElement(using: &rng)!)
        // An output map, sometimes with names that need quoting (spaces, '#', a leading '-').
        if maybe() {
            let folders = ["site", "../web data", "#out", "-x", "/srv/www", "a: b"]
            job.map = folders.randomElement(using: &rng)! + "/" + name(&rng) + (maybe() ? ".json" : ".JSON")
        }
        return job
    }

    static let jobs = Generator<JobSpec, Shrink.None<JobSpec>>(run: { rng in job(&rng) })

    @Test func printedJobsParseBackEqual() async {
        await propertyCheck(count: 1000, input: Self.jobs) { job in
            let text = ManifestPrinter.print(job)
            switch JobDecoder.decode(text, file: "rt.job", filters: TestCatalogue.all) {
            case .success(let parsed):
                #expect(parsed == job, "\(text)")
                #expect(ManifestPrinter.print(parsed) == text)
            case .failure(let diagnostics):
                Issue.record("printed job does not parse:\n\(text)\n\(diagnostics)")
            }
        }
    }

    /// Any string without a NUL, which a value cannot hold (docs/manifest.md: a file name ends
    /// at it; `bad-escapes.job`): drawn from every scalar, this failed about one run in a hundred.
    @Test func anyStringSurvivesAsAFilterArgument() async {
        let strings = Gen<UInt32>.value(in: 1...0x10FFFF).compactMap(Unicode.Scalar.init).array(of: 0...20)
            .map { scalars in
                var view = String.UnicodeScalarView()
                view.append(contentsOf: scalars)
                return String(view)
            }
        await propertyCheck(count: 1000, input: strings) { label in
            let text = "job: j\ninputs: [a]\noutputs:\n  - name: v\n    path: o/{stem}.png\n    filters:\n      - vignette:\n          strength: 1\n          label: \(ScalarWriter.block(label))\n"
            let job = try? JobDecoder.decode(text, file: "s.job", filters: TestCatalogue.all).get()
            #expect(job?.outputs[0].filters[0].arguments["label"] == .string(label), "\(text)")
        }
    }

    @Test func theCanonicalFormOfTheExampleIsStable() throws {
        let job = try JobDecoder.decode(exampleManifest, file: "e.job", filters: TestCatalogue.all).get()
        let printed = ManifestPrinter.print(job)
        #expect(printed.contains("    background: '#ffffff'\n"))
        #expect(printed.contains("      - motion:\n          angle: 30\n          radius: 20\n"))
        #expect(try JobDecoder.decode(printed, file: "p.job", filters: TestCatalogue.all).get() == job)
    }
}
