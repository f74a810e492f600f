import BlurfarmCore
import BlurfarmImageIO
import BlurfarmManifest
import BlurfarmState
import BlurfarmPlugins
import BlurfarmSystem
import Foundation
import Synchronization

/// `check JOB --sheet FOLDER`: the page people review a redaction by (docs/privacy.md). For
/// every input of every variant whose regions come from a file per input (a detector's boxes),
/// a thumbnail of the photo as shown with each box drawn and its score, in `FOLDER/index.html`
/// and `FOLDER/thumbs/`; the photos to look at first listed first: those that fail (their
/// regions cannot be had, or the photo cannot be read), those published unredacted (no region
/// file, `missing: skip`), those with no box. A static page: no script, nothing fetched.
public enum ReviewSheet {
    /// What the sheet says of one input, most urgent first.
    public enum Status: Equatable, Sendable {
        /// Its regions cannot be had, or the photo cannot be read: it fails; the reason.
        case fails(String)
        /// No region file and `missing: skip`: published as it is.
        case unredacted
        /// A region file without boxes: the detector found nothing.
        case noBoxes
        /// Boxes found.
        case boxes

        /// Its place in the sheet: the most urgent first.
        var rank: Int {
            switch self {
            case .fails: 0
            case .unredacted: 1
            case .noBoxes: 2
            case .boxes: 3
            }
        }

        var cssClass: String {
            switch self {
            case .fails: "fails"
            case .unredacted: "unredacted"
            case .noBoxes: "none"
            case .boxes: "boxes"
            }
        }
    }

    /// One input of one variant.
    public struct Entry: Sendable {
        public let job: String
        public let variant: String
        /// The input, as the plan names it relative to the manifest's folder.
        public let input: String
        /// The input's path as planned.
        let path: String
        public let status: Status
        /// The boxes as shares of the image as shown (0...1), with the detector's scores.
        public let boxes: [(x: Double, y: Double, width: Double, height: Double, score: Double?)]
    }

    /// The entries of `plans`: each input of each variant with a region file, most urgent first,
    /// then by job, variant and input.
    /// Variants whose regions a detector finds list each input with the boxes the run will
    /// filter (those of `detectors`, cached or found now: at least the threshold, grown), or
    /// failing with why (the detector missing, the photo unreadable).
    public static func entries(
        of plans: [JobPlan], detectors: [String: Result<RegionDetector, PluginError>] = [:],
        limits: (pixels: Int, memory: Int, decodes: Int) = (ImageReader.defaultPixelLimit, ImageReader.usableMemory, 1)
    ) -> [Entry] {
        var entries: [Entry] = []
        for plan in plans {
            for variant in plan.job.outputs {
                if let detection = variant.detection {
                    for input in plan.inputs {
                        entries.append(entry(
                            of: input, variant: variant.name, detection: detection, detector: detectors[detection.detector],
                            plan: plan, limits: limits))
                    }
                    continue
                }
                guard let spec = variant.regionFile else { continue }
                for failure in plan.regionFailed {
                    entries.append(Entry(
                        job: plan.job.name, variant: variant.name, input: relative(failure.input, in: plan), path: failure.input,
                        status: .fails(failure.reason), boxes: []))
                }
                for input in plan.inputs {
                    entries.append(entry(of: input, variant: variant.name, spec: spec, plan: plan))
                }
            }
        }
        return urgentFirst(entries)
    }

    /// `entries` most urgent first (failing, unredacted, no box, boxes), in their order within each.
    static func urgentFirst(_ entries: [Entry]) -> [Entry] {
        entries.enumerated().sorted { a, b in
            a.element.status.rank != b.element.status.rank ? a.element.status.rank < b.element.status.rank : a.offset < b.offset
        }.map(\.element)
    }

    /// `path` relative to the plan's folder when below it.
    private static func relative(_ path: String, in plan: JobPlan) -> String {
        let folder = plan.folder == "." ? "" : plan.folder + "/"
        return !folder.isEmpty && path.hasPrefix(folder) ? String(path.dropFirst(folder.count)) : path
    }

    /// The entry of a planned input for a variant whose regions come from `spec`: its file read
    /// again, as the plan read it.
    private static func entry(of input: PlannedInput, variant: String, spec: RegionFile, plan: JobPlan) -> Entry {
        func made(_ status: Status, _ boxes: [(Double, Double, Double, Double, Double?)] = []) -> Entry {
            Entry(
                job: plan.job.name, variant: variant, input: input.relativePath, path: input.path, status: status,
                boxes: boxes.map { (x: $0.0, y: $0.1, width: $0.2, height: $0.3, score: $0.4) })
        }
        guard let file = JobPlanner.regionFilePath(of: spec, variant: variant, inputPath: input.path, job: plan.job.name)
        else { return made(.fails("its region file's name cannot be made")) }
        switch JobPlanner.readRegionFile(file) {
        case .missing: return made(.unredacted)
        case .unreadable(let reason): return made(.fails("'\(ShownName.of(file))': \(reason)"))
        case .read(let bytes):
            do {
                let contents = try RegionFile.contents(of: bytes)
                if contents.boxes.isEmpty { return made(.noBoxes) }
                return made(.boxes, contents.boxes.map { box in
                    (box.x / contents.width, box.y / contents.height, box.width / contents.width, box.height / contents.height, box.score)
                })
            } catch {
                return made(.fails("'\(ShownName.of(file))': \(error)"))
            }
        }
    }

    /// The entry of a planned input for a variant whose regions `detection` finds: the regions
    /// the run will filter (the detector's boxes at or above the threshold, grown), with scores.
    private static func entry(
        of input: PlannedInput, variant: String, detection: RegionDetection,
        detector: Result<RegionDetector, PluginError>?, plan: JobPlan, limits: (pixels: Int, memory: Int, decodes: Int)
    ) -> Entry {
        func made(_ status: Status, _ boxes: [(x: Double, y: Double, width: Double, height: Double, score: Double?)] = []) -> Entry {
            Entry(job: plan.job.name, variant: variant, input: input.relativePath, path: input.path, status: status, boxes: boxes)
        }
        let found: RegionDetector
        switch detector {
        case .success(let detector): found = detector
        case .failure(let error): return made(.fails("the detector '\(detection.detector)': \(error)"))
        case nil: return made(.fails("the detector '\(detection.detector)' was not loaded"))
        }
        let contents: RegionFile.Contents
        do {
            contents = try found.boxes(
                ofImageAt: input.path, threads: ProcessInfo.processInfo.activeProcessorCount, pixelLimit: limits.pixels,
                memoryLimit: limits.memory, confinement: nil)
        } catch {
            return made(.fails("\(error)"))
        }
        let kept = detection.kept(contents)
        if kept.isEmpty { return made(.noBoxes) }
        return made(.boxes, kept.map { box in
            (box.x / contents.width, box.y / contents.height, box.width / contents.width, box.height / contents.height, box.score)
        })
    }

    /// The longer side of a thumbnail, in pixels.
    public static let thumbnailSide = 320

    /// Writes the sheet of `plans` into `folder` (made when missing): `index.html` and a JPEG
    /// thumbnail of each input in `thumbs/`, at most `limits.decodes` decoded at once, each
    /// with its share of `limits.memory`. An input whose thumbnail cannot be made is listed as
    /// failing, with why. Returns the entries as written.
    /// - Throws: `CocoaError` when the folder or a file cannot be written.
    public static func write(
        _ plans: [JobPlan], to folder: String, detectors: [String: Result<RegionDetector, PluginError>] = [:],
        limits: (pixels: Int, memory: Int, decodes: Int)
    ) throws -> [Entry] {
        var entries = entries(of: plans, detectors: detectors, limits: limits)
        let thumbs = (folder as NSString).appendingPathComponent("thumbs")
        try FileManager.default.createDirectory(atPath: thumbs, withIntermediateDirectories: true)
        // One thumbnail an input, however many variants list it.
        let paths = Array(Set(entries.map(\.path))).sorted()
        let names = Dictionary(uniqueKeysWithValues: paths.enumerated().map { ($1, String(format: "%05d.jpg", $0 + 1)) })
        let problems = Mutex([String: String]())
        let next = Atomic(0)
        let lanes = max(1, min(limits.decodes, ProcessInfo.processInfo.activeProcessorCount, paths.count))
        DispatchQueue.concurrentPerform(iterations: lanes) { _ in
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                if index >= paths.count { return }
                let path = paths[index]
                do {
                    let thumbnail = try ImageReader.thumbnail(
                        path, width: thumbnailSide, height: thumbnailSide, fit: .inside, upscale: false,
                        pixelLimit: limits.pixels, memoryLimit: limits.memory / lanes)
                    let jpeg = try ImageWriter.encode(
                        thumbnail.pixels, extension: "jpg", named: path, sourceBitDepth: 8, sourceHadAlpha: false,
                        metadata: nil, options: EncodeOptions(quality: 85, metadata: .strip, bitDepth: 8))
                    try Data(jpeg.bytes).write(to: URL(fileURLWithPath: (thumbs as NSString).appendingPathComponent(names[path]!)), options: .atomic)
                } catch {
                    problems.withLock { $0[path] = "\(error)" }
                }
            }
        }
        let unreadable = problems.withLock { $0 }
        // A photo that cannot be read fails (its own failure, if it had one, kept).
        entries = urgentFirst(entries.map { entry in
            guard let problem = unreadable[entry.path], entry.status.rank > 0 else { return entry }
            return Entry(job: entry.job, variant: entry.variant, input: entry.input, path: entry.path, status: .fails(problem), boxes: [])
        })
        let html = page(entries, thumbnails: names, unreadable: Set(unreadable.keys))
        try Data(html.utf8).write(to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent("index.html")), options: .atomic)
        return entries
    }

    /// The page: a summary, then a card per entry.
    static func page(_ entries: [Entry], thumbnails: [String: String], unreadable: Set<String>) -> String {
        func count(_ test: (Status) -> Bool) -> Int { entries.filter { test($0.status) }.count }
        let fails = count { if case .fails = $0 { true } else { false } }
        let summary = [
            "\(counted(entries.count, "photo"))",
            "\(fails) failing", "\(count { $0 == .unredacted }) published unredacted", "\(count { $0 == .noBoxes }) with no box",
            "\(count { $0 == .boxes }) with boxes",
        ].joined(separator: " · ")
        var cards = ""
        for entry in entries {
            let caption: String
            switch entry.status {
            case .fails(let reason): caption = "fails: " + reason
            case .unredacted: caption = "no region file: published unredacted (missing: skip)"
            case .noBoxes: caption = "no box: published as it is"
            case .boxes: caption = counted(entry.boxes.count, "box")
            }
            var photo = ""
            if let name = thumbnails[entry.path], !unreadable.contains(entry.path) {
                photo = "<img src=\"thumbs/\(name)\" alt=\"\">"
                for box in entry.boxes {
                    let style = String(
                        format: "left:%.3f%%;top:%.3f%%;width:%.3f%%;height:%.3f%%", box.x * 100, box.y * 100, box.width * 100,
                        box.height * 100)
                    let score = box.score.map { String(format: "%.2f", $0) } ?? ""
                    photo += "<div class=\"box\" style=\"\(style)\"><span>\(escape(score))</span></div>"
                }
            }
            cards += """
                <figure class="card \(entry.status.cssClass)"><div class="photo">\(photo)</div>\
                <figcaption><b>\(escape(ShownName.of(entry.input)))</b><br>\(escape(entry.job)) · \(escape(entry.variant))<br>\
                <span class="status">\(escape(caption))</span></figcaption></figure>

                """
        }
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>blurfarm review sheet</title>
            <style>
            body { font: 14px system-ui, sans-serif; margin: 16px; background: #f4f4f4; color: #111; }
            .grid { display: flex; flex-wrap: wrap; gap: 12px; }
            .card { margin: 0; width: 336px; background: #fff; border: 2px solid #ccc; padding: 6px; }
            .card.fails { border-color: #c00; } .card.unredacted { border-color: #e08000; } .card.none { border-color: #888; }
            .photo { position: relative; display: inline-block; line-height: 0; }
            .photo img { max-width: 320px; max-height: 320px; }
            .box { position: absolute; border: 3px solid #ff00ff; box-sizing: border-box; }
            .box span { position: absolute; left: 0; top: -16px; background: #ff00ff; color: #fff; font-size: 11px; line-height: 14px; padding: 0 2px; }
            figcaption { margin-top: 4px; overflow-wrap: anywhere; } .fails .status { color: #c00; } .unredacted .status { color: #a05000; }
            </style></head>
            <body><h1>Review sheet</h1><p id="summary">\(escape(summary))</p>
            <div class="grid">
            \(cards)</div></body></html>

            """
    }

    /// `text` safe in HTML text and attribute values.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
