import BlurfarmCore

/// Reads the farm's configuration file into a ``FarmConfiguration``, or every problem in it.
///
/// The file is in the manifest language; every key is optional, an empty file gives the
/// defaults, and an unknown key is an error. Relative folders (`state`, `plugin-folders`)
/// are resolved against the folder of `file`. Finding the file (`--config`,
/// `$BLURFARM_CONFIG`, the shipped default) is the command line's business.
public enum ConfigurationDecoder {
    /// The configuration's keys, in the order `docs/configuration.md` lists them.
    public static let keys = [
        "workers", "tile", "decoded-images", "whole-image-pixels", "pixel-limit", "memory-limit", "max-outputs", "state", "reports-kept", "jobs-kept", "plugin-folders", "task-timeout",
        "heartbeat-timeout", "retries", "server", "token-file",
    ]

    /// Decodes a configuration file's bytes read from `file`.
    public static func decode(_ bytes: [UInt8], file: String) -> Result<FarmConfiguration, Diagnostics> {
        let (root, parsed) = ManifestParser.parse(bytes, file: file)
        var d = Decoding()
        var configuration: FarmConfiguration?
        if let root {
            configuration = decodeConfiguration(root, file: file, &d)
        } else if !parsed.hasErrors {
            configuration = FarmConfiguration()
        }
        var all = parsed
        all.append(contentsOf: d.diagnostics)
        all = all.sortedByLocation()
        if let configuration, !all.hasErrors { return .success(configuration) }
        if !all.hasErrors {
            all.append(.error("configuration could not be read", at: SourceLocation(file: file, line: 1, column: 1)))
        }
        return .failure(all)
    }

    /// Decodes configuration text as if read from `file`.
    public static func decode(_ text: String, file: String) -> Result<FarmConfiguration, Diagnostics> {
        decode(Array(text.utf8), file: file)
    }

    /// Reads the configuration file at `path` and decodes it.
    public static func decode(fileAtPath path: String) -> Result<FarmConfiguration, Diagnostics> {
        switch SourceFile.readBytes(atPath: path) {
        case .success(let bytes): decode(bytes, file: path)
        case .failure(let diagnostics): .failure(diagnostics)
        }
    }

    /// `path` joined to the folder of `file` unless it is absolute; `file`'s folder is
    /// everything before its last `/` (none: `path` as is).
    public static func resolve(_ path: String, against file: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let slash = file.lastIndex(of: "/") else { return path }
        return String(file[...slash]) + path
    }

    static func decodeConfiguration(_ root: Node, file: String, _ d: inout Decoding) -> FarmConfiguration? {
        guard case .map(let entries) = root.content else {
            if case .invalid = root.content { return nil }
            d.error("a configuration is a map of 'key: value' lines", at: root.location)
            return nil
        }
        d.reportUnknownKeys(entries, known: keys, context: nil)
        func entry(_ key: String) -> Node.MapEntry? { entries.first { $0.key == key } }
        var c = FarmConfiguration()
        var ok = true
        func integer(_ key: String, _ range: ClosedRange<Int>, _ d: inout Decoding, _ set: (Int) -> Void) {
            guard let e = entry(key) else { return }
            if let v = d.integer(e, in: range) { set(v) } else { ok = false }
        }
        integer("workers", 1...Int.max, &d) { c.workers = $0 }
        integer("tile", 0...RenderSchedule.largestTileSize, &d) { c.tile = $0 }
        integer("decoded-images", 1...Int.max, &d) { c.decodedImages = $0 }
        integer("whole-image-pixels", 0...Int.max, &d) { c.wholeImagePixels = $0 }
        integer("pixel-limit", 1...Int.max, &d) { c.pixelLimit = $0 }
        integer("max-outputs", 1...Int.max, &d) { c.maxOutputs = $0 }
        integer("retries", 0...Int.max, &d) { c.retries = $0 }
        integer("reports-kept", 1...Int.max, &d) { c.reportsKept = $0 }
        integer("jobs-kept", 1...Int.max, &d) { c.jobsKept = $0 }
        if let e = entry("memory-limit") {
            if case .scalar(let scalar) = e.value.content, let bytes = FarmConfiguration.byteCount(scalar.text) {
                c.memoryLimit = bytes
            } else {
                if case .invalid = e.value.content {} else {
                    d.error("'memory-limit' must be a number of bytes, e.g. 16GB, 12GiB or 8000000000", at: e.value.location)
                }
                ok = false
            }
        }
        if let e = entry("state") {
            if let text = d.string(e, expected: "a folder") {
                if text.isEmpty {
                    d.error("'state' must be a folder", at: e.value.location)
                    ok = false
                } else {
                    c.state = resolve(text, against: file)
                }
            } else {
                ok = false
            }
        }
        if let e = entry("server") {
            if let text = d.string(e, expected: "a URL") {
                if text.hasPrefix("http://") || text.hasPrefix("https://") {
                    c.server = text
                } else {
                    d.error("'server' must be a URL: http://host:port", at: e.value.location)
                    ok = false
                }
            } else {
                ok = false
            }
        }
        if let e = entry("token-file") {
            if let text = d.string(e, expected: "a file") {
                if text.isEmpty {
                    d.error("'token-file' must be a file", at: e.value.location)
                    ok = false
                } else {
                    c.tokenFile = resolve(text, against: file)
                }
            } else {
                ok = false
            }
        }
        if let e = entry("plugin-folders") {
            if let items = d.scalarList(e, expected: "a list of folders") {
                c.pluginFolders = items.map {
                    $0.text == FarmConfiguration.buildFolder ? $0.text : resolve($0.text, against: file)
                }
            } else {
                ok = false
            }
        }
        if let e = entry("task-timeout") {
            if let v = d.number(e, greaterThan: 0) { c.taskTimeout = v } else { ok = false }
        }
        if let e = entry("heartbeat-timeout") {
            if let v = d.number(e, greaterThan: 0) { c.heartbeatTimeout = v } else { ok = false }
        }
        return ok ? c : nil
    }
}
