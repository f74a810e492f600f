import BlurfarmCore
import BlurfarmImageIO
import BlurfarmState
import Foundation

/// The last step of every output, whichever path made its pixels (``JobRunner``'s in this
/// process, a worker's whole image, band by band): the folders missing on the way made beneath
/// the roots, the file written atomically, and the report of what was written, or of why not.
/// One place, so that every path makes folders, writes, fails and reports alike.
struct OutputCommit {
    let output: PlannedOutput
    let input: PlannedInput
    /// The folders made on the way to the output's (recorded with it, removed by `--prune`
    /// when emptied).
    let folders: [CreatedFolder]

    /// Begins `output`'s commit: the folders missing on the way to its folder, made beneath
    /// `confinement`'s roots.
    ///
    /// - Throws: ``OutputFailure/write(_:)`` when a folder cannot be made.
    init(_ output: PlannedOutput, of input: PlannedInput, confinement: RootConfinement?) throws(OutputFailure) {
        self.output = output
        self.input = input
        let folder = PathName.folder(of: output.path)
        guard !folder.isEmpty else {
            folders = []
            return
        }
        do throws(StateError) {
            folders = try CreatedFolder.make(folder, confinement: confinement)
        } catch {
            // A folder that cannot be made on a full or read-only disk is refused as a file is.
            throw .write(ImageIOError(code: error.refusal ?? .outputFolderNotWritable, path: output.path, message: "\(error)"))
        }
    }

    /// Puts the file in place with `write` (an atomic write of the encoded bytes, or a band
    /// writer's last rename), unless `control`'s job ended meanwhile (a cancelled job, a
    /// stopped run, or a full disk there writes nothing more). A band writer whose rows were all handed over is
    /// finished even so (`control` nil): its file may already be in place. Nor is an output
    /// whose regions were found in its input put in place unless its input is still the file
    /// searched (``inputChanged()``), asked here once its pixels are decoded, or by a band
    /// writer (``placing``) just before it puts its file in place, whichever way it encodes
    /// (its saver's thread may have done so already: then its file is the one searched).
    ///
    /// - Throws: how the job ended, ``inputChanged()``'s failure, or ``OutputFailure/write(_:)``.
    func write(unless control: JobControl?, _ write: () throws(ImageIOError) -> Void) throws(OutputFailure) {
        if let ended = control?.ended(writing: output.path) { throw ended }
        if control != nil, let changed = inputChanged() { throw changed }
        do throws(ImageIOError) {
            try write()
        } catch {
            throw inputChanged() ?? .write(error)
        }
    }

    /// Why an output whose regions a detector found in its input (``PlannedVariant/regionsOf``)
    /// is not put in place: the input is no longer the file searched, replaced or rewritten
    /// since, so its pixels may be another photo's than the boxes' (one photo's face published
    /// where another's was found). Nil for every other output. Its input fails its regions
    /// (the next run finds them again; an output an earlier run made of it is withdrawn).
    func inputChanged() -> OutputFailure? { placing().map { .regions("\($0)") } }

    /// ``inputChanged()`` for a band writer (``BandWriter``'s `placing`), asked on its saver's
    /// thread before the file goes in place.
    var placing: @Sendable () -> ImageIOError? {
        guard let stamp = output.shared.regionsOf else { return { nil } }
        let path = input.path
        return { FileStamp.of(path) == stamp ? nil : RegionDetector.changed(path) }
    }

    /// What was written, for its report.
    struct Written {
        var width: Int
        var height: Int
        /// The tiles rendered for it, and those of them copied (no region reaches them).
        var tiles = 0
        var tilesCopied = 0
        /// Bands it was streamed in (0: made whole).
        var bands = 0
        var decodeSeconds = 0.0
        var filterSeconds = 0.0
        var encodeSeconds = 0.0
        var retries = 0
        /// XXH3-64 of its pixels as rendered.
        var checksum: UInt64
    }

    /// The report of the output written, with the folders made on the way.
    func written(_ written: Written) -> OutputReport {
        var report = OutputReport(
            input: input.relativePath, output: output.path, variant: output.variant.name, status: .written,
            tiles: written.tiles, tilesCopied: written.tilesCopied, pixels: written.width * written.height,
            bands: written.bands, decodeSeconds: written.decodeSeconds, filterSeconds: written.filterSeconds,
            encodeSeconds: written.encodeSeconds, retries: written.retries,
            checksum: String(format: "%016llx", written.checksum))
        report.createdFolders = folders
        (report.width, report.height) = (written.width, written.height)
        return report
    }

    /// The report of the output not written, for `failure`, with the folders made on the way.
    func failed(_ failure: OutputFailure, decode: Double = 0, retries: Int = 0) -> OutputReport {
        OutputReport.failed(output, of: input, failure, decode: decode, retries: retries, folders: folders)
    }
}

extension OutputReport {
    /// The report of `output` of `input` that was not written: why, the seconds its decode
    /// took, the attempts retried, the folders made on the way to it. Its status is `stopped`
    /// or `cancelled` when the job's end cut it short, else `failed`.
    static func failed(
        _ output: PlannedOutput, of input: PlannedInput, _ failure: OutputFailure, decode: Double = 0, retries: Int = 0,
        folders: [CreatedFolder] = []
    ) -> OutputReport {
        let status: Status =
            switch failure {
            case .stopped: .stopped
            case .cancelled: .cancelled
            default: .failed
            }
        var report = OutputReport(
            input: input.relativePath, output: output.path, variant: output.variant.name, status: status,
            decodeSeconds: decode, retries: retries, failure: failure)
        report.createdFolders = folders
        return report
    }

    /// The report of `output` of `input`, not started: its job ended, or its disk stopped
    /// taking writes (`failure`), before its input was read for it. Counted, not listed
    /// (``notStarted``).
    static func notStarted(_ output: PlannedOutput, of input: PlannedInput, _ failure: OutputFailure) -> OutputReport {
        var report = failed(output, of: input, failure)
        report.notStarted = true
        return report
    }
}
