// What several test targets need: a seeded generator, the built executable, the corpus.
import Foundation

/// A small deterministic random generator (SplitMix64), so that a failing case can be rerun
/// from its seed.
public struct SplitMix: RandomNumberGenerator {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The built `blurfarm` executable: SwiftPM builds it into the folder that holds the test
/// bundle (or one of that folder's ancestors).
public enum BuiltExecutable {
    public static var url: URL {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = bundle.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("blurfarm").path),
            folder.path != "/"
        {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("blurfarm")
    }

    /// The built `blurfarm-worker` executable, beside `blurfarm`: the worker processes.
    public static var worker: URL { url.deletingLastPathComponent().appendingPathComponent("blurfarm-worker") }
}

/// The shared test photographs: `shared/corpus` beside the repository's folder.
public enum Corpus {
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // file, BlurfarmTestSupport, Tests
        return url.deletingLastPathComponent().appendingPathComponent("shared/corpus").path
    }()

    /// The path of a corpus file, e.g. `Corpus.path("special/kite.webp")`.
    public static func path(_ relative: String) -> String { root + "/" + relative }
}

/// File names as the kernel keeps them: bytes, whatever text they are or are not.
public enum RawNames {
    /// The names in `folder` (without "." and ".."), as bytes, sorted; nil when it cannot be read.
    public static func inFolder(_ folder: String) -> [[UInt8]]? {
        guard let directory = opendir(folder) else { return nil }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) }
            if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
        }
        return names.sorted { $0.lexicographicallyPrecedes($1) }
    }
}

/// Processes the tests start and watch.
public enum Processes {
    /// Whether `pid` runs: a zombie (dead, not yet reaped) does not.
    public static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }
}
