import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels
import Synchronization

/// The outputs of one input made band by band from one decode: the file read at its depth as
/// the bands need it (``BandReader``), each band of each output rendered as it comes
/// (``BandedRender``) and appended to the output's encoder (``BandWriter``). The one way every
/// place that streams an image does it: the coordinator (its bands' tiles spread over the
/// workers), a worker's whole-image task (on its one core, encoded in memory) and `apply`.
///
/// Outputs whose pixels are the same (the same `key`, written into the same samples over the
/// same background: the formats of a variant) share one chain of the render, and each band of
/// it is appended to each of them.
public struct StreamedOutputs {
    /// The render: one chain per group.
    public let banded: BandedRender
    /// The outputs of each of the render's chains, by index into the writers; the first leads
    /// (a report counts the render's tiles and time on it).
    public let groups: [[Int]]
    /// Each output's encoder, in the caller's order.
    public let writers: [BandWriter]

    /// The outputs of `chains` (one each, in tiles of `tileSize`) to `writers`, from an image
    /// of `image`; `keys` say which render the same pixels.
    public init(image: Rect, chains: [FilterChain], writers: [BandWriter], keys: [AnyHashable], tileSize: Int) {
        precondition(chains.count == writers.count && keys.count == writers.count, "a chain, a writer and a key each")
        var groups: [(key: AnyHashable, layout: SampleLayout, background: SIMD3<Float>, members: [Int])] = []
        for (index, writer) in writers.enumerated() {
            if let g = groups.firstIndex(where: {
                $0.key == keys[index] && $0.layout == writer.layout && $0.background == writer.background
            }) {
                groups[g].members.append(index)
            } else {
                groups.append((keys[index], writer.layout, writer.background, [index]))
            }
        }
        let leaders = groups.map { chains[$0.members[0]] }
        self.groups = groups.map(\.members)
        self.writers = writers
        banded = BandedRender(
            chains: leaders, tileSize: tileSize, image: image,
            bandHeight: BandedRender.bandHeight(
                forTile: tileSize, chains: leaders, image: image, encoderWaits: writers.contains(where: \.waitsForEncoder)),
            depth: RenderSchedule.windowsAhead)
    }

    /// Why a streamed render stopped: the decode, or what the rendering threw.
    public enum Failure: Error {
        case decode(ImageIOError)
        case render(any Error)
    }

    /// What ``run(reader:allocator:bandsInFlight:render:)`` did.
    public struct Outcome {
        /// The ``PixelChecksum`` of each group's samples, band after band (what the
        /// whole-image path gives for the same samples).
        public var checksums: [UInt64]
        /// Each output's append that failed (its encoder's failure): the others go on.
        public var writeFailures: [ImageIOError?]
        /// The time the reads took (on the decoding thread), and each output's appends.
        public var decodeTime: Duration
        public var encodeTimes: [Duration]
        /// What stopped the render, if anything; the writers are then to be abandoned.
        public var failure: Failure?
    }

    /// Renders a band of group `chain` (its window, its output band to fill, the background
    /// its output is composited over) and returns what waits for it (``BandedRender/BandRendering``).
    public typealias Rendering =
        @Sendable (_ chain: Int, _ band: Rect, _ window: AnyPixels, _ output: AnyPixels, _ background: SIMD3<Float>) throws
        -> () throws -> Void

    /// Reads `reader` band by band, renders each group's bands with `render` (up to
    /// `bandsInFlight` at once, their windows and outputs from `allocator`), and appends each
    /// finished band to the group's writers, top to bottom; once every writer has failed, the
    /// run stops. The writers are neither finished nor abandoned: that is the caller's, output
    /// by output, from the outcome.
    public func run(
        reader: BandReader, allocator: (any PixelAllocator)?, bandsInFlight: Int, decodeAhead: Bool = true,
        render: @escaping Rendering
    ) -> Outcome {
        let clock = ContinuousClock()
        let decodeTime = Mutex(Duration.zero)
        var outcome = Outcome(
            checksums: Array(repeating: 0, count: groups.count), writeFailures: Array(repeating: nil, count: writers.count),
            decodeTime: .zero, encodeTimes: Array(repeating: .zero, count: writers.count), failure: nil)
        let backgrounds = groups.map { writers[$0[0]].background }
        do {
            try banded.run(
                source: reader.layout, outputs: groups.map { writers[$0[0]].layout }, allocator: allocator,
                bandsInFlight: bandsInFlight, decodeAhead: decodeAhead
            ) { band in
                let start = clock.now
                defer { decodeTime.withLock { $0 += clock.now - start } }
                do throws(ImageIOError) { try reader.read(into: band) } catch { throw Failure.decode(error) }
            } render: { chain, band, window, output in
                let rendered: () throws -> Void
                do { rendered = try render(chain, band, window, output, backgrounds[chain]) } catch { throw Failure.render(error) }
                return {
                    do { try rendered() } catch { throw Failure.render(error) }
                }
            } write: { chain, band in
                outcome.checksums[chain] = PixelChecksum.of(band, in: band.rect, continuing: outcome.checksums[chain])
                for member in groups[chain] where outcome.writeFailures[member] == nil {
                    let start = clock.now
                    do throws(ImageIOError) {
                        try writers[member].append(band)
                    } catch {
                        outcome.writeFailures[member] = error
                    }
                    outcome.encodeTimes[member] += clock.now - start
                }
                // Nothing left to write to: the decode and the rendering stop too.
                if !outcome.writeFailures.contains(where: { $0 == nil }) { throw EveryWriterFailed() }
            }
        } catch let failure as Failure {
            outcome.failure = failure
        } catch is EveryWriterFailed {
            // Each output's own failure says why.
        } catch {
            preconditionFailure("a banded render rethrows its closures' errors only: \(error)")
        }
        outcome.decodeTime = decodeTime.withLock { $0 }
        return outcome
    }

    /// Stops a run whose every writer failed.
    private struct EveryWriterFailed: Error {}

    /// The tiles each group's render is cut into, in all.
    public var tiles: [Int] {
        groups.indices.map { chain in banded.bands(ofChain: chain).reduce(0) { $0 + banded.tiles(of: $1).count } }
    }
}
