import BlurfarmCore
import BlurfarmPluginABI
import BlurfarmSystem

/// A detector plugin's table, checked (`blurfarm_detector` in blurfarm_plugin.h;
/// docs/plugins.md#detectors): its name, what it finds, and sessions that find it.
public final class Detector: @unchecked Sendable {
    public static let supportedABIVersion = BLURFARM_DETECTOR_ABI_VERSION
    /// The name `detect:` writes, and the `<name>` of its `lib<name>.so`.
    public let name: String
    /// One line: what it finds, with which model.
    public let summary: String
    /// What each box is ("face").
    public let label: String
    /// The lowest threshold it takes: boxes are cached down to it.
    public let lowestThreshold: Double
    /// The library's path.
    public let path: String
    /// The table, valid while the process lives (libraries are never unloaded).
    private let table: UnsafePointer<blurfarm_detector>

    init(table: UnsafePointer<blurfarm_detector>, path: String, expectedName: String) throws(PluginError) {
        func refuse(_ message: String) -> PluginError { PluginError(path, message) }
        let version = table.pointee.abi_version
        guard version == Self.supportedABIVersion else {
            throw refuse(
                "built for detector ABI version \(version); this blurfarm supports version \(Self.supportedABIVersion)")
        }
        let entry = table.pointee
        guard entry.flags == 0 else {
            throw refuse("the detector's table sets flags 0x\(String(entry.flags, radix: 16)), which version \(version) does not define")
        }
        guard let name = try Plugin.string(entry.name, "the name", path) else { throw refuse("the table has no name") }
        guard name == expectedName else {
            throw refuse("the detector calls itself '\(name)'; its file must be named lib\(name).so")
        }
        guard entry.open != nil, entry.detect != nil, entry.close != nil else {
            throw refuse("the detector's table lacks open, detect or close")
        }
        guard entry.lowest_threshold > 0, entry.lowest_threshold <= 1 else {
            throw refuse("the detector's lowest threshold \(entry.lowest_threshold) is not in (0, 1]")
        }
        self.name = name
        summary = try Plugin.string(entry.description, "the description", path) ?? ""
        label = try Plugin.string(entry.label, "the label", path) ?? name
        lowestThreshold = entry.lowest_threshold
        self.path = path
        self.table = table
    }

    /// The model opened for one thread (`open`), from `modelFolder`.
    ///
    /// - Throws: ``PluginError`` with the detector's message (a missing model says how to install it).
    public func session(modelFolder: String) throws(PluginError) -> DetectorSession {
        var state: UnsafeMutableRawPointer?
        var identity = [CChar](repeating: 0, count: 256)
        var message = [CChar](repeating: 0, count: 1024)
        let code = identity.withUnsafeMutableBufferPointer { id in
            message.withUnsafeMutableBufferPointer { m in
                table.pointee.open(modelFolder, &state, id.baseAddress, id.count - 1, m.baseAddress, m.count - 1)
            }
        }
        guard code == BLURFARM_OK, let state else {
            throw PluginError(path, "open failed (\(Plugin.codeName(code) ?? "\(code)")): \(Self.text(message))")
        }
        let named = Self.text(identity)
        guard !named.isEmpty else {
            table.pointee.close(state)
            throw PluginError(path, "open gave the model no identity")
        }
        return DetectorSession(detector: self, table: table, state: state, identity: named)
    }

    /// A message a plugin wrote, ending at the buffer's end whatever it wrote, control
    /// characters escaped.
    static func text(_ buffer: [CChar]) -> String {
        ShownName.of(bytes: buffer.dropLast().prefix { $0 != 0 }.map { UInt8(bitPattern: $0) })
    }
}

/// One thread's open detector: what `detect` runs on, by one thread at a time (sendable so that
/// a pool can hand it from thread to thread). Closed when the value goes.
public final class DetectorSession: @unchecked Sendable {
    public let detector: Detector
    /// The model's identity as the detector names it (boxes are cached under it).
    public let identity: String
    private let table: UnsafePointer<blurfarm_detector>
    private let state: UnsafeMutableRawPointer

    init(detector: Detector, table: UnsafePointer<blurfarm_detector>, state: UnsafeMutableRawPointer, identity: String) {
        self.detector = detector
        self.table = table
        self.state = state
        self.identity = identity
    }

    deinit { table.pointee.close(state) }

    /// The most boxes taken from one call: a tile of faces at the lowest threshold has a few
    /// thousand; more is a detector gone wrong.
    public static let mostBoxes = 1 << 16

    /// One box the detector found, in the image coordinates of the buffer given.
    public typealias Box = DetectedBox

    /// The boxes in `image` (3 or 4 channels) scoring at least `threshold`, found on at most
    /// `threads` threads (at least 1). A box that is not
    /// finite, not inside the buffer's rectangle grown by its own size, or scores outside
    /// [threshold, 1] is refused: the detector is broken.
    ///
    /// - Throws: ``PluginError`` with the detector's message.
    public func detect(_ image: PixelBuffer, threshold: Double, threads: Int) throws(PluginError) -> [Box] {
        let threads = Int32(clamping: max(1, threads))
        var capacity = 64
        while true {
            var found = [blurfarm_detection](repeating: blurfarm_detection(), count: capacity)
            var count = 0
            var message = [CChar](repeating: 0, count: 1024)
            let code = image.withUnsafePixels { pixels in
                var buffer = blurfarm_buffer(image, data: pixels)
                return found.withUnsafeMutableBufferPointer { f in
                    message.withUnsafeMutableBufferPointer { m in
                        table.pointee.detect(
                            state, &buffer, threshold, threads, f.baseAddress, f.count, &count, m.baseAddress, m.count - 1)
                    }
                }
            }
            guard code == BLURFARM_OK else {
                throw PluginError(detector.path, "detect failed (\(Plugin.codeName(code) ?? "\(code)")): \(Detector.text(message))")
            }
            if count > capacity {
                guard count <= Self.mostBoxes else {
                    throw PluginError(detector.path, "detect found \(count) boxes in one image; at most \(Self.mostBoxes) are taken")
                }
                capacity = count
                continue
            }
            let rect = image.rect
            return try found.prefix(count).map { d throws(PluginError) in
                let values = [d.x, d.y, d.width, d.height, d.score]
                guard values.allSatisfy(\.isFinite), d.width > 0, d.height > 0, d.score >= threshold, d.score <= 1,
                    d.x >= Double(rect.x) - d.width, d.y >= Double(rect.y) - d.height,
                    d.x + d.width <= Double(rect.maxX) + d.width, d.y + d.height <= Double(rect.maxY) + d.height
                else {
                    throw PluginError(
                        detector.path, "detect returned the box \(d.width)x\(d.height)+\(d.x)+\(d.y) scoring \(d.score) "
                            + "for the image \(rect) at threshold \(threshold)")
                }
                return Box(x: d.x, y: d.y, width: d.width, height: d.height, score: d.score)
            }
        }
    }
}
