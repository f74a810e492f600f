import BlurfarmCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A temporary folder for one benchmark: its inputs (links to the real files), its manifests,
/// a configuration with its own state folder, its outputs. Removed when released.
final class BenchFolder {
    let url: URL
    /// The configuration `blurfarm run` is given: `state: state`, beside it.
    let config: String

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-bench-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url.appendingPathComponent("in"), withIntermediateDirectories: true)
        config = url.appendingPathComponent("bench.conf").path
        try "state: state\n".write(toFile: config, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    var path: String { url.path }

    /// Links `images` (`copies` times over) into `in/` and returns the links' paths.
    func link(_ images: [String], copies: Int = 1) throws -> [String] {
        var files: [String] = []
        for copy in 0..<copies {
            for (index, image) in images.enumerated() {
                let name = String(format: "c%03d-%05d-", copy, index) + PathName.lastName(of: image)
                let link = url.appendingPathComponent("in").appendingPathComponent(name)
                try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: image)
                files.append(link.path)
            }
        }
        return files
    }

    /// Writes a manifest reading `in/*` with `variants` (from ``BenchJob``) and returns its path.
    func writeJob(_ name: String, variants: [String]) throws -> String {
        let job = url.appendingPathComponent(name)
        try "job: bench\ninputs: [in/*]\noutputs:\n\(variants.joined(separator: "\n"))\n"
            .write(to: job, atomically: true, encoding: .utf8)
        return job.path
    }

    /// A fresh empty folder `name` inside, for the outputs of libvips.
    func freshFolder(_ name: String) throws -> String {
        let folder = url.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.path
    }

    /// Removes blurfarm's outputs and its state folder: the next run is a first run.
    func clearOutputs() {
        try? FileManager.default.removeItem(at: url.appendingPathComponent("out"))
        try? FileManager.default.removeItem(at: url.appendingPathComponent("state"))
    }

    /// The image files in `folder` (`.jpg`, `.jpeg`, `.png`, `.webp`, `.tif`, `.tiff`), sorted, as paths.
    static func images(in folder: String) throws(BenchError) -> [String] {
        let extensions: Set<String> = ["jpg", "jpeg", "png", "webp", "tif", "tiff"]
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            throw BenchError("bench: cannot read the folder \(folder)")
        }
        return names.filter { extensions.contains(PathName.pathExtension(of: $0).lowercased()) }.sorted()
            .map { (folder as NSString).appendingPathComponent($0) }
    }
}

/// The variants of the manifests the benchmarks write (docs/manifest.md).
enum BenchJob {
    /// A variant named `name` writing `path`, with a gaussian of `sigma` if given, a `resize:`
    /// block's lines if given, at JPEG `quality`.
    static func variant(name: String, path: String, resize: String? = nil, sigma: Double? = nil, quality: Int) -> String {
        var lines = ["  - name: \(name)", "    path: \(path)"]
        if let resize { lines += ["    resize:", "      \(resize)"] }
        if let sigma { lines += ["    filters:", "      - gaussian:", "          sigma: \(sigma)"] }
        lines.append("    quality: \(quality)")
        return lines.joined(separator: "\n")
    }
}
