import BlurfarmCore

/// Writes a job back as manifest text in canonical form: every key in a fixed order, every
/// default spelled out, two-space indentation, strings quoted only when they must be.
///
/// Parsing the printed text gives back an equal ``JobSpec`` (locations aside), and
/// printing that again gives the same text.
public enum ManifestPrinter {
    /// The canonical text of `job`, ending in a newline.
    public static func print(_ job: JobSpec) -> String {
        var out = ""
        out += "job: \(ScalarWriter.block(job.name))\n"
        out += "inputs: \(ScalarWriter.inlineList(job.inputs))\n"
        out += "exclude: \(ScalarWriter.inlineList(job.exclude))\n"
        out += "outputs:\n"
        for variant in job.outputs {
            out += "  - name: \(ScalarWriter.block(variant.name))\n"
            let indent = "    "
            out += indent + "path: \(ScalarWriter.block(variant.pathTemplate.text))\n"
            if !variant.formats.isEmpty { out += indent + "formats: \(ScalarWriter.inlineList(variant.formats))\n" }
            if variant.filters.isEmpty {
                out += indent + "filters: []\n"
            } else {
                out += indent + "filters:\n"
                for filter in variant.filters {
                    if filter.arguments.isEmpty, filter.regions.isEverywhere {
                        out += indent + "  - \(ScalarWriter.block(filter.name))\n"
                        continue
                    }
                    out += indent + "  - \(filter.name):\n"
                    for name in filter.arguments.keys.sorted() {
                        out += indent + "      \(name): \(ScalarWriter.value(filter.arguments[name]!))\n"
                    }
                    if !filter.regions.isEverywhere {
                        out += regions(filter.regions.regions, indent: indent + "      ")
                        out += indent + "      invert: \(filter.regions.invert)\n"
                    }
                }
            }
            out += indent + "edge: \(variant.edge.rawValue)\n"
            out += indent + "colour: \(variant.colour.rawValue)\n"
            out += indent + "quality: \(variant.quality)\n"
            out += indent + "lossless: \(variant.lossless)\n"
            out += indent + "progressive: \(variant.progressive)\n"
            out += indent + "subsampling: \(variant.subsampling.rawValue)\n"
            out += indent + "optimize-coding: \(variant.optimizeCoding)\n"
            if let effort = variant.effort { out += indent + "effort: \(effort)\n" }
            out += indent + "metadata: \(variant.metadata.rawValue)\n"
            for (key, format) in VariantSpec.formatBlocks {
                guard let block = variant.formatSettings[format] else { continue }
                let values: [(String, String?)] = [
                    ("quality", block.quality.map(String.init)), ("lossless", block.lossless.map(String.init)),
                    ("progressive", block.progressive.map(String.init)), ("subsampling", block.subsampling?.rawValue),
                    ("optimize-coding", block.optimizeCoding.map(String.init)), ("effort", block.effort.map(String.init)),
                ]
                // A block without settings says nothing (and the language has no empty map).
                let set = values.compactMap { key, value in value.map { (key, $0) } }
                if set.isEmpty { continue }
                out += indent + "\(key):\n"
                for (name, value) in set { out += indent + "  \(name): \(value)\n" }
            }
            if let resize = variant.resize {
                out += indent + "resize:\n"
                if let width = resize.width { out += indent + "  width: \(width)\n" }
                if let height = resize.height { out += indent + "  height: \(height)\n" }
                if !resize.sizes.isEmpty { out += indent + "  sizes: [\(resize.sizes.map(String.init).joined(separator: ", "))]\n" }
                out += indent + "  fit: \(resize.fit.rawValue)\n"
                if resize.fit == .cover { out += indent + "  crop: \(resize.crop.rawValue)\n" }
                out += indent + "  upscale: \(resize.upscale)\n"
                out += indent + "  sharpen: \(resize.sharpen.map(ScalarWriter.number) ?? "false")\n"
            }
            out += indent + "background: \(ScalarWriter.block(variant.background.description))\n"
            if let file = variant.regionFile {
                out += indent + "regions:\n"
                out += indent + "  from: \(ScalarWriter.block(file.path.text))\n"
                out += indent + "  shape: \(file.shape.rawValue)\n"
                out += indent + "  feather: \(ScalarWriter.number(file.feather))\n"
                out += indent + "  missing: \(file.missing.rawValue)\n"
                out += indent + "invert: \(variant.regions.invert)\n"
            } else if let detection = variant.detection {
                out += indent + "regions:\n"
                out += indent + "  detect: \(ScalarWriter.block(detection.detector))\n"
                out += indent + "  threshold: \(ScalarWriter.number(detection.threshold))\n"
                out += indent + "  grow: \(ScalarWriter.number(detection.grow))\n"
                out += indent + "  shape: \(detection.shape.rawValue)\n"
                out += indent + "  feather: \(ScalarWriter.number(detection.feather))\n"
                out += indent + "invert: \(variant.regions.invert)\n"
            } else if !variant.regions.isEverywhere {
                out += regions(variant.regions.regions, indent: indent)
                out += indent + "invert: \(variant.regions.invert)\n"
                out += indent + "output: \(variant.regions.extent == .image ? "image" : "region")\n"
            }
        }
        if let tile = job.tile { out += "tile: \(tile)\n" }
        out += "verify: \(job.verify.rawValue)\n"
        if let map = job.map { out += "map: \(ScalarWriter.block(map))\n" }
        return out
    }
}

extension ManifestPrinter {
    /// `regions:` and its list of shapes, at `indent`.
    static func regions(_ regions: [Region], indent: String) -> String {
        var out = indent + "regions:\n"
        for region in regions {
            out += indent + "  - \(region.shape.rawValue):\n"
            for (key, length) in [("x", region.x), ("y", region.y), ("width", region.width), ("height", region.height)] {
                out += indent + "      \(key): \(length.text)\n"
            }
            if region.shape == .rect {
                out += indent + "      corner-radius: \(ScalarWriter.number(region.cornerRadius))\n"
            }
            out += indent + "      feather: \(ScalarWriter.number(region.feather))\n"
        }
        return out
    }
}

/// Writes scalars so that the parser reads back exactly the same text.
public enum ScalarWriter {
    /// `text` as a value after `key: ` or `- `: bare when that reads back as the same
    /// string, else quoted.
    public static func block(_ text: String) -> String {
        needsQuotes(text, inFlow: false) ? quoted(text) : text
    }

    /// `[a, b]`, items quoted as needed.
    public static func inlineList(_ items: [String]) -> String {
        "[" + items.map { needsQuotes($0, inFlow: true) ? quoted($0) : $0 }.joined(separator: ", ") + "]"
    }

    /// A filter argument: numbers and booleans bare, strings as ``block(_:)``.
    public static func value(_ value: ParameterValue) -> String {
        switch value {
        case .integer(let i): String(i)
        case .number(let x): number(x)
        case .boolean(let b): String(b)
        case .string(let s): block(s)
        }
    }

    /// A finite number in a form the parser reads back to the same `Double`: integral
    /// values below 10^15 without a fraction, others in Swift's shortest round-trip form.
    public static func number(_ x: Double) -> String {
        if x == x.rounded(), abs(x) < 1e15 { return String(Int(x)) }
        return "\(x)"
    }

    /// Whether `text` must be quoted to read back as this string.
    static func needsQuotes(_ text: String, inFlow: Bool) -> Bool {
        let b = Array(text.utf8)
        guard let first = b.first, let last = b.last else { return true }
        if isWhiteSpace(first) || isWhiteSpace(last) { return true }
        switch first {
        case UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "!"), UInt8(ascii: "{"), UInt8(ascii: "}"),
            UInt8(ascii: "|"), UInt8(ascii: ">"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ","),
            UInt8(ascii: "#"), UInt8(ascii: "%"), doubleQuote, singleQuote:
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "?"):
            if b.count == 1 || isWhiteSpace(b[1]) { return true }
        default: break
        }
        for (k, c) in b.enumerated() {
            if c < 0x20 || c == 0x7F { return true }
            if c == 0xC2, k + 1 < b.count, (0x80...0x9F).contains(b[k + 1]) { return true }  // C1 controls
            if c == colon, k + 1 == b.count || isWhiteSpace(b[k + 1]) { return true }
            if c == hash, k > 0, isWhiteSpace(b[k - 1]) { return true }
            if inFlow, c == comma || c == openBracket || c == closeBracket { return true }
            if c == 0xEF, k + 2 < b.count, b[k + 1] == 0xBB, b[k + 2] == 0xBF { return true }
        }
        let plain = Scalar(text: text, style: .plain, contentColumn: 1)
        return plain.numberValue != nil || plain.booleanValue != nil
    }

    /// `'text'` when that needs no escape, else `"text"` with escapes.
    static func quoted(_ text: String) -> String {
        let needsEscapes = text.unicodeScalars.contains { $0 == "'" || isEscaped($0) }
        if !needsEscapes { return "'" + text + "'" }
        var out = "\""
        for s in text.unicodeScalars {
            switch s {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if isEscaped(s) {
                    out += "\\u{" + String(s.value, radix: 16) + "}"
                } else {
                    out.unicodeScalars.append(s)
                }
            }
        }
        return out + "\""
    }

    /// Characters the parser refuses raw in a file: controls (C0, DEL and C1; tab included
    /// here, to keep quoted text on one visible line) and the byte order mark.
    private static func isEscaped(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || (0x7F...0x9F).contains(s.value) || s.value == 0xFEFF
    }
}
