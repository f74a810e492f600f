import BlurfarmCore

/// A variant's outputs: its formats and their settings, its path, its resize.
extension JobDecoder {
    /// A `jpeg:`, `webp:` or `avif:` block: the settings of that format's outputs, over the
    /// variant's (``VariantSpec/FormatSettings/keys(of:)``).
    static func decodeFormatBlock(
        _ entry: Node.MapEntry, format: ImageFormat, _ d: inout Decoding
    ) -> VariantSpec.FormatSettings? {
        let keys = VariantSpec.FormatSettings.keys(of: format)
        guard let entries = d.mapEntries(entry.value, key: entry.key, expected: "a map of " + keys.joined(separator: ", "))
        else { return nil }
        d.reportUnknownKeys(entries, known: keys, context: entry.key)
        var block = VariantSpec.FormatSettings()
        for e in entries where keys.contains(e.key) {
            switch e.key {
            case "quality": block.quality = d.integer(e, in: 1...100)
            case "lossless": block.lossless = d.boolean(e)
            case "progressive": block.progressive = d.boolean(e)
            case "optimize-coding": block.optimizeCoding = d.boolean(e)
            case "subsampling": block.subsampling = d.choice(e, of: ChromaSubsampling.self)
            case "effort":
                block.effort = d.integer(e, in: 0...(format.maximumEffort ?? 9))
            default: break
            }
        }
        // A value that did not decode leaves its field nil: count what was given against what decoded.
        let decoded = [block.quality != nil, block.lossless != nil, block.progressive != nil, block.optimizeCoding != nil,
            block.subsampling != nil, block.effort != nil].filter { $0 }.count
        return decoded == entries.count ? block : nil
    }

    /// `formats`: a list of known output extensions, each format once.
    static func decodeFormats(_ entry: Node.MapEntry, _ d: inout Decoding) -> [String]? {
        let expected = "a list of output formats, such as [avif, webp, jpg]"
        guard let items = d.scalarList(entry, expected: expected) else { return nil }
        if items.isEmpty {
            d.error("'formats' must name at least one format: \(expected)", at: entry.value.location)
            return nil
        }
        var ok = true
        var seen: [ImageFormat: String] = [:]
        for item in items {
            let ext = item.text.lowercased()
            guard let format = ImageFormat(extension: ext) else {
                d.error(
                    "'\(item.text)' is not a format blurfarm writes: "
                        + ImageFormat.extensions.joined(separator: ", "), at: item.node.location)
                ok = false
                continue
            }
            if let first = seen[format] {
                d.error("'\(item.text)' names \(format.name) again (after '\(first)')", at: item.node.location)
                ok = false
            }
            seen[format] = item.text
        }
        return ok ? items.map { $0.text.lowercased() } : nil
    }

    /// The output path: placeholders known, a known image extension (with `formats`, `{ext}`
    /// in its place), and something that tells inputs apart.
    static func pathTemplate(_ entry: Node.MapEntry, formats: Bool, _ d: inout Decoding) -> PathTemplate? {
        guard let text = d.string(entry, expected: "a path such as out/{stem}.jpg") else { return nil }
        let node = entry.value
        if text.isEmpty {
            d.error("'path' must not be empty", at: node.location)
            return nil
        }
        let template: PathTemplate
        do {
            template = try PathTemplate(text)
        } catch {
            let at = node.location(ofScalarAt: error.offset)
            d.error(error.message, at: at)
            if let suggestion = error.suggestion { d.note("did you mean '\(suggestion)'?", at: at) }
            return nil
        }
        var ok = true
        let extensions = ImageFormat.extensions
        if formats {
            if !template.text.hasSuffix(".{ext}") {
                d.error("with 'formats', the output path ends in '.{ext}', which each format's extension replaces", at: node.location)
                ok = false
            }
        } else if let ext = template.fixedExtension, extensions.contains(ext.lowercased()) {
            // a known format
        } else {
            d.error(
                "the output path must end in "
                    + extensions.dropLast().map { ".\($0)" }.joined(separator: ", ") + " or .\(extensions.last!)",
                at: node.location)
            ok = false
        }
        if !template.uses(.stem), !template.uses(.name) {
            d.error("the output path needs '{stem}' or '{name}', or every input writes the same file", at: node.location)
            ok = false
        }
        return ok ? template : nil
    }

    static func decodeResize(_ entry: Node.MapEntry, _ d: inout Decoding) -> ResizeSpec? {
        guard let entries = d.mapEntries(entry.value, key: "resize", expected: "a map with 'width' and/or 'height'") else {
            return nil
        }
        d.reportUnknownKeys(entries, known: resizeKeys, context: "resize")
        func value(_ key: String) -> Node.MapEntry? { entries.first { $0.key == key } }
        var ok = true
        var width: Int?, height: Int?
        if let e = value("width") {
            width = d.integer(e, in: 1...DecodeRequest.largestThumbnailSide)
            if width == nil { ok = false }
        }
        if let e = value("height") {
            height = d.integer(e, in: 1...DecodeRequest.largestThumbnailSide)
            if height == nil { ok = false }
        }
        var sizes: [Int] = []
        if let e = value("sizes") {
            let expected = "a list of widths such as [256, 512, 1024]"
            if let items = d.scalarList(e, expected: expected) {
                for item in items {
                    guard case .scalar(let s) = item.node.content, let size = s.integerValue,
                        (1...DecodeRequest.largestThumbnailSide).contains(size)
                    else {
                        d.error(
                            "each of 'sizes' must be an integer from 1 to \(DecodeRequest.largestThumbnailSide)", at: item.node.location)
                        ok = false
                        continue
                    }
                    if sizes.contains(size) {
                        d.error("size \(size) is listed twice", at: item.node.location)
                        ok = false
                    }
                    sizes.append(size)
                }
                if items.isEmpty {
                    d.error("'sizes' needs at least one width", at: e.value.location)
                    ok = false
                }
            } else {
                ok = false
            }
            for key in ["width", "height"] {
                if let other = value(key) {
                    d.error("'\(key)' cannot be given with 'sizes' (each size is a width)", at: other.keyLocation)
                    ok = false
                }
            }
        }
        var fit = ResizeSpec.Fit.inside
        var fitKnown = true
        if let e = value("fit") {
            if let v = d.choice(e, of: ResizeSpec.Fit.self) { fit = v } else { ok = false; fitKnown = false }
        }
        var upscale = false
        if let e = value("upscale") {
            if let v = d.boolean(e) { upscale = v } else { ok = false }
        }
        var crop = ResizeSpec.Crop.centre
        if let e = value("crop") {
            if let v = d.choice(e, of: ResizeSpec.Crop.self) {
                crop = v
                if fitKnown, fit != .cover {
                    d.error("'crop' applies to fit 'cover' only", at: e.value.location)
                    ok = false
                }
            } else {
                ok = false
            }
        }
        var sharpen: Double?
        if let e = value("sharpen") {
            let expected = "true, false or a sigma from 0.01 to 100"
            if case .scalar(let s) = e.value.content, let b = s.booleanValue {
                sharpen = b ? ResizeSpec.defaultSharpenSigma : nil
            } else if case .scalar(let s) = e.value.content, let x = s.numberValue, (0.01...100).contains(x) {
                sharpen = x
            } else if case .invalid = e.value.content {
                ok = false
            } else {
                d.error("'sharpen' must be \(expected)", at: e.value.location)
                ok = false
            }
        }
        if ok, sizes.isEmpty, value("width") == nil, value("height") == nil, !entry.value.isIncomplete {
            d.error("'resize' needs 'width' or 'height'", at: entry.keyLocation)
            ok = false
        }
        if ok, !sizes.isEmpty, fit != .inside {
            d.error("'sizes' works with fit 'inside' only", at: value("fit")!.value.location)
            ok = false
        }
        if ok, sizes.isEmpty, fit != .inside, width == nil || height == nil {
            d.error("fit '\(fit.rawValue)' needs both 'width' and 'height'", at: value("fit")!.value.location)
            ok = false
        }
        return ok ? ResizeSpec(width: width, height: height, fit: fit, upscale: upscale, crop: crop, sharpen: sharpen,
                sizes: sizes.sorted()) : nil
    }
}
