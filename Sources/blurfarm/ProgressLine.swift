import BlurfarmCoordinator
import Foundation

/// The live progress line of `blurfarm run` on a terminal: outputs and inputs done, tiles,
/// megapixels per second, an estimate of the time left, failures. Off a terminal (cron) it
/// prints nothing, so that only failures and the summary reach the log.
struct ProgressLine {
    /// Whether standard error is a terminal: the line is drawn only there.
    static var isTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    let job: String
    let outputsTotal: Int
    let inputsTotal: Int
    private let started = ContinuousClock.now
    private var outputs = 0
    private var inputs: Set<String> = []
    private var tiles = 0
    private var pixels = 0
    private var failures = 0

    init(job: String, outputsTotal: Int, inputsTotal: Int) {
        self.job = job
        self.outputsTotal = outputsTotal
        self.inputsTotal = inputsTotal
    }

    /// Counts one finished output and redraws the line.
    mutating func record(_ output: OutputReport) {
        outputs += 1
        inputs.insert(output.input)
        tiles += output.tiles
        pixels += output.pixels
        if output.status == .failed { failures += 1 }
        draw()
    }

    private func draw() {
        let elapsed = (ContinuousClock.now - started).seconds
        let rate = elapsed > 0 ? Double(pixels) / 1e6 / elapsed : 0
        let left = outputs > 0 ? elapsed / Double(outputs) * Double(outputsTotal - outputs) : 0
        Self.draw(
            job: job, images: (inputs.count, inputsTotal), outputs: outputs, of: outputsTotal, tiles: tiles,
            megapixelsPerSecond: rate, secondsLeft: left, failed: failures)
    }

    /// Draws the line of a job the farm service runs (`submit --wait`, `job --wait`), from the
    /// server's counts (it does not count images).
    func show(
        job: String, outputs: Int, of total: Int, tiles: Int, megapixelsPerSecond: Double, secondsLeft: Double,
        failed: Int
    ) {
        Self.draw(
            job: job, images: nil, outputs: outputs, of: total, tiles: tiles, megapixelsPerSecond: megapixelsPerSecond,
            secondsLeft: secondsLeft, failed: failed)
    }

    private static func draw(
        job: String, images: (done: Int, total: Int)?, outputs: Int, of total: Int, tiles: Int,
        megapixelsPerSecond: Double, secondsLeft: Double, failed: Int
    ) {
        let counts = images.map { "\($0.done)/\($0.total) images, " } ?? ""
        let line = "\(job): \(counts)\(outputs)/\(total) outputs, \(tiles) tiles, "
            + String(format: "%.1f MP/s, ETA %.0f s, ", megapixelsPerSecond, secondsLeft) + "\(failed) failed"
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
    }

    /// Clears the line, so that the summary and failures print on a clean line.
    func clear() {
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
