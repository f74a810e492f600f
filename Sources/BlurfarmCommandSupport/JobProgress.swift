import BlurfarmCoordinator
import Foundation

/// A job's progress as the live progress line of `blurfarm run` shows it: outputs and inputs
/// done, tiles, megapixels per second, an estimate of the time left, failures.
public struct JobProgress: Sendable {
    public let job: String
    public let outputsTotal: Int
    public let inputsTotal: Int
    private let started = ContinuousClock.now
    private var outputs = 0
    /// The inputs with an output finished in the batches the farm has finished
    /// (``endBatch()``), counted, and in the batch going on, by path: a batch's paths held at
    /// most, where every input's path held took 141 MB at a million inputs (33-byte paths).
    private var inputsBefore = 0
    private(set) var inputs: Set<String> = []
    private var tiles = 0
    private var pixels = 0
    private var failures = 0

    public init(job: String, outputsTotal: Int, inputsTotal: Int) {
        self.job = job
        self.outputsTotal = outputsTotal
        self.inputsTotal = inputsTotal
    }

    /// Counts one finished output.
    public mutating func record(_ output: OutputReport) {
        outputs += 1
        inputs.insert(output.input)
        tiles += output.tiles
        pixels += output.pixels
        if output.status == .failed { failures += 1 }
    }

    /// Whether every output is finished.
    public var isComplete: Bool { outputs >= outputsTotal }

    /// The farm finished a batch of inputs (``FarmEvent/batchFinished(_:)``): none of its
    /// inputs comes again, so they are counted, not held.
    public mutating func endBatch() {
        inputsBefore += inputs.count
        inputs.removeAll(keepingCapacity: true)
    }

    /// The line now: the rate since the job was accepted, the time left at that pace.
    public var line: String {
        let elapsed = (ContinuousClock.now - started).seconds
        let rate = elapsed > 0 ? Double(pixels) / 1e6 / elapsed : 0
        let left = outputs > 0 ? elapsed / Double(outputs) * Double(outputsTotal - outputs) : 0
        return Self.line(
            job: job, images: (inputsBefore + inputs.count, inputsTotal), outputs: outputs, of: outputsTotal, tiles: tiles,
            megapixelsPerSecond: rate, secondsLeft: left, failed: failures)
    }

    /// The line of these counts: `job: 3/10 images, 5/20 outputs, 40 tiles, 12.5 MP/s, ETA 9 s, 0 failed`;
    /// without `images` for a job the farm service runs (`submit --wait`: it does not count images).
    public static func line(
        job: String, images: (done: Int, total: Int)?, outputs: Int, of total: Int, tiles: Int,
        megapixelsPerSecond: Double, secondsLeft: Double, failed: Int
    ) -> String {
        let counts = images.map { "\($0.done)/\($0.total) images, " } ?? ""
        return "\(job): \(counts)\(outputs)/\(total) outputs, \(tiles) tiles, "
            + String(format: "%.1f MP/s, ETA %.0f s, ", megapixelsPerSecond, secondsLeft) + "\(failed) failed"
    }
}
