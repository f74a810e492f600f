import BlurfarmSystem
import BlurfarmCore
import CVips
import Foundation
import Synchronization

/// Writes an image to a file band by band, top to bottom, while its later rows are still being
/// made: a libvips saver runs on a thread of its own from the start and copies each band's rows
/// straight out of the band appended, so memory holds the bands, not the image. An 8-bit JPEG
/// keeping no metadata but its profile is encoded by libjpeg on the appending thread instead
/// (``JPEGEncoder``: libvips's bytes, without its thread and ring).
///
/// The file's bytes are those ``ImageWriter/write(_:to:sourceBitDepth:sourceHadAlpha:metadata:options:temporaryFiles:)``
/// writes for the same pixels, and it is written as atomically: to a temporary file beside the
/// output, renamed over it by ``finish()``; ``abandon()`` or any failure removes the temporary
/// file and leaves the output as it was. Or, ``inMemory(path:width:height:channels:sourceBitDepth:sourceHadAlpha:metadata:options:)``,
/// the same bytes are encoded in memory for the caller (``finishEncoded()``): a worker encodes
/// a whole-image task's outputs so, and the coordinator writes them. One thread at a time may
/// append.
public final class BandWriter: @unchecked Sendable {
    /// The output file.
    public let path: String
    /// The image's width and height in pixels.
    public let width: Int
    public let height: Int
    /// Rows appended so far.
    public private(set) var rowsWritten = 0

    /// What encodes the rows.
    private enum Encoder {
        /// libvips's saver, on a thread of its own from the start, taking the rows from a ring.
        case saver(SuppliedRowsImage)
        /// A large JPEG's chunks, each encoded as soon as its rows are in and spliced at the
        /// end (``JPEGChunks``); written to the file opened in `folder`, or kept in memory.
        case chunks(JPEGChunkQueue, folder: Int32?, temporaryFiles: TemporaryFiles?)
        /// libjpeg on the appending thread, into memory; written to the file opened in
        /// `folder`, or kept in memory.
        case direct(JPEGEncoder, folder: Int32?, temporaryFiles: TemporaryFiles?)
    }
    private let encoder: Encoder
    private let format: ImageFormat
    /// Asked once the file is encoded, before it is put in place: a refusal leaves the output
    /// as it was, as a failed encode does (``init(path:width:height:channels:sourceBitDepth:sourceHadAlpha:metadata:options:temporaryFiles:confinement:ringRows:placing:)``).
    private let placing: @Sendable () -> ImageIOError?
    private let alpha: Bool
    private let bitDepth: Int
    /// The colour a translucent pixel is composited over when the file has no alpha (the
    /// encoder's option).
    public let background: SIMD3<Float>
    /// The saver thread's outcome, once it is done: the bytes encoded in memory, or none
    /// when they went to the file.
    private let outcome = Mutex<Result<[UInt8]?, ImageIOError>?>(nil)
    private let saved = DispatchSemaphore(value: 0)


    /// Whether an image can be written band by band to `path` with `options`: whether it has
    /// alpha is known before the pixels are (an output of 4 `channels` from a source without
    /// alpha has alpha only if some pixel is translucent, unless the format has no alpha).
    /// When the saver's bytes are not the file's (JPEG, WebP and AVIF with less than all the
    /// metadata: stripping rewrites them), the file is encoded in memory, band by band all the
    /// same, and written when it is whole.
    public static func canWrite(to path: String, channels: Int, sourceHadAlpha: Bool, options: EncodeOptions) -> Bool {
        guard let format = ImageFormat(extension: OutputPath(path).extension) else { return false }
        return channels == 3 || sourceHadAlpha || !format.storesAlpha
    }

    /// The ``layout`` of a writer of an image to `path` with `options`, from a source of
    /// `sourceBitDepth` bits with alpha or without, or nil where the encoding is refused (an
    /// unknown extension, options the format does not take).
    public static func layout(
        path: String, sourceBitDepth: Int, sourceHadAlpha: Bool, options: EncodeOptions
    ) -> SampleLayout? {
        guard
            let (format, bitDepth) = try? ImageWriter.checkEncoding(
                extension: OutputPath(path).extension, named: path, size: Rect(width: 1, height: 1),
                sourceBitDepth: sourceBitDepth, options: options)
        else { return nil }
        return SampleLayout(format: .file(bitDepth: bitDepth), channels: storesAlpha(format, sourceHadAlpha: sourceHadAlpha) ? 4 : 3)
    }

    /// Whether the file has alpha: when its format stores it and the source had it (``canWrite(to:channels:sourceHadAlpha:options:)``
    /// refuses 4 channels from a source without alpha in a format that stores it).
    private static func storesAlpha(_ format: ImageFormat, sourceHadAlpha: Bool) -> Bool {
        format.storesAlpha && sourceHadAlpha
    }

    /// Starts writing a `width` × `height` image whose rendered pixels have `channels`
    /// channels to `path`, encoded as ``ImageWriter/encode(_:for:sourceBitDepth:sourceHadAlpha:metadata:options:)``
    /// encodes: the temporary file is created and the saver started.
    ///
    /// The output's folder is opened here, below the roots of `confinement` when given (as
    /// ``ImageWriter/write(_:temporaryFiles:confinement:)`` opens it): a folder outside them is
    /// refused by this initialiser, with nothing written, and the file is created and renamed
    /// in the folder opened.
    ///
    /// `placing` is asked once the whole file is encoded, every row appended, just before it
    /// is put in place (on the saver's thread, which puts it in place as soon as it has the
    /// last row, or in ``finish()``): the error it gives is the writer's, and the output stays
    /// as it was.
    ///
    /// - Precondition: ``canWrite(to:channels:sourceHadAlpha:options:)``.
    /// - Throws: `ImageIOError` as `ImageWriter.encode` and `ImageWriter.write` do.
    public convenience init(
        path: String, width: Int, height: Int, channels: Int, sourceBitDepth: Int, sourceHadAlpha: Bool,
        metadata: ImageMetadata?, options: EncodeOptions, temporaryFiles: TemporaryFiles? = nil,
        confinement: RootConfinement? = nil, ringRows: Int = RenderSchedule.encoderRingRows,
        placing: @escaping @Sendable () -> ImageIOError? = { nil }
    ) throws(ImageIOError) {
        try ImageWriter.checkDestination(path, options: options)
        try self.init(
            path: path, width: width, height: height, channels: channels, sourceBitDepth: sourceBitDepth,
            sourceHadAlpha: sourceHadAlpha, metadata: metadata, options: options,
            file: (temporaryFiles, confinement), ringRows: ringRows, placing: placing)
    }

    /// Starts encoding, as the initialiser does, the image it would write to `path`, but into
    /// memory: no file or folder is touched (`path` names the format and the errors), and
    /// ``finishEncoded()`` gives the bytes, those the initialiser's writer puts in the file.
    ///
    /// - Precondition: ``canWrite(to:channels:sourceHadAlpha:options:)``.
    public static func inMemory(
        path: String, width: Int, height: Int, channels: Int, sourceBitDepth: Int, sourceHadAlpha: Bool,
        metadata: ImageMetadata?, options: EncodeOptions
    ) throws(ImageIOError) -> BandWriter {
        try BandWriter(
            path: path, width: width, height: height, channels: channels, sourceBitDepth: sourceBitDepth,
            sourceHadAlpha: sourceHadAlpha, metadata: metadata, options: options, file: nil,
            ringRows: RenderSchedule.encoderRingRows, placing: { nil })
    }

    /// A writer to the file `path` (`file` its temporary files and confinement), or into
    /// memory when `file` is nil.
    private init(
        path: String, width: Int, height: Int, channels: Int, sourceBitDepth: Int, sourceHadAlpha: Bool,
        metadata: ImageMetadata?, options: EncodeOptions,
        file: (temporaryFiles: TemporaryFiles?, confinement: RootConfinement?)?, ringRows: Int,
        placing: @escaping @Sendable () -> ImageIOError?
    ) throws(ImageIOError) {
        precondition(
            Self.canWrite(to: path, channels: channels, sourceHadAlpha: sourceHadAlpha, options: options),
            "\(path) cannot be written band by band")
        let output = OutputPath(path)
        let (format, bitDepth) = try ImageWriter.checkEncoding(
            extension: output.extension, named: path, size: Rect(width: width, height: height),
            sourceBitDepth: sourceBitDepth, options: options)
        self.path = path
        self.width = width
        self.height = height
        self.format = format
        self.placing = placing
        self.bitDepth = bitDepth
        background = options.background
        // canWrite: with 4 channels and no source alpha, the format has no alpha.
        alpha = Self.storesAlpha(format, sourceHadAlpha: sourceHadAlpha)
        let folder = try file.map { file throws(ImageIOError) in
            try AtomicFile.openFolder(of: output, confinement: file.confinement)
        }
        let plan = JPEGChunks.plan(width: width, height: height, format: format, options: options, bitDepth: bitDepth)
        if let plan, JPEGChunks.encodesInParallel(pixels: width * height) {
            encoder = .chunks(
                JPEGChunkQueue(width: width, height: height, plan: plan, metadata: metadata, options: options), folder: folder,
                temporaryFiles: file?.temporaryFiles)
            return
        }
        // A large JPEG's restart markers where its chunks would end (the bytes of the chunks).
        let restartInterval = plan?.interval ?? 0
        if JPEGEncoder.canEncode(format: format, bitDepth: bitDepth, channels: alpha ? 4 : 3, options: options) {
            do throws(LibvipsFailure) {
                encoder = .direct(
                    try JPEGEncoder(
                        width: width, height: height, options: options, restartInterval: restartInterval, metadata: metadata),
                    folder: folder, temporaryFiles: file?.temporaryFiles)
            } catch {
                if let folder { Syscalls.close(folder) }
                throw ImageIOError(code: .encodeFailed, path: path, message: error.message)
            }
            return
        }
        let rows: SuppliedRowsImage
        do throws(ImageIOError) {
            try Libvips.start()
        } catch {
            if let folder { Syscalls.close(folder) }
            throw error
        }
        do throws(LibvipsFailure) {
            rows = try SuppliedRowsImage(
                width: width, height: height, bands: alpha ? 4 : 3,
                format: bitDepth == 16 ? VIPS_FORMAT_USHORT : VIPS_FORMAT_UCHAR,
                interpretation: ImageWriter.interpretation(bitDepth: bitDepth), capacity: max(1, ringRows))
        } catch {
            if let folder { Syscalls.close(folder) }
            throw ImageIOError(code: .encodeFailed, path: path, message: error.message)
        }
        encoder = .saver(rows)
        ImageWriter.tag(rows.image, metadata: metadata, options: options)
        // A thread refused (the user's `ulimit -u`) fails the writer at once: the appends would
        // wait for a saver that never runs.
        do throws(Threads.StartFailure) {
            try Threads.start(stackSize: 8 << 20) { [self] in
                let result = Result { () throws(ImageIOError) -> [UInt8]? in
                    // In memory (and for a file whose saver cannot write it as it is: encoded,
                    // stripped, then written).
                    func encoded() throws(ImageIOError) -> [UInt8] {
                        do throws(LibvipsFailure) {
                            return try format.encode(rows.image, options: options)
                        } catch {
                            throw ImageIOError(code: .encodeFailed, path: path, message: error.message)
                        }
                    }
                    guard let folder, let file else { return try encoded() }
                    guard format.savesDirectly(options) else {
                        let bytes = try encoded()
                        if let refusal = placing() { throw refusal }
                        try AtomicFile.write(bytes, to: output, inFolder: folder, temporaryFiles: file.temporaryFiles)
                        return nil
                    }
                    try AtomicFile.write(to: output, inFolder: folder, temporaryFiles: file.temporaryFiles) {
                        (descriptor) throws(ImageIOError) in
                        let target = VipsTargetRef(file: descriptor)
                        let encoding = Result { () throws(LibvipsFailure) in
                            try Libvips.save(format.saverName, to: target) {
                                format.save(rows.image, options: options, to: $0)
                            }
                        }
                        // A write that failed is the cause ("No space left on device", "File too
                        // large"), not libvips's "unable to write to target"; and a saver that
                        // did not notice it must not leave a cut file in place.
                        if let failure = target.fileFailure {
                            throw .writing(path, failure)
                        }
                        if case .failure(let error) = encoding {
                            throw ImageIOError(code: .encodeFailed, path: path, message: error.message)
                        }
                        if let refusal = placing() { throw refusal }
                    }
                    return nil
                }
                if let folder { Syscalls.close(folder) }
                rows.close()
                outcome.withLock { $0 = result }
                saved.signal()
            }
        } catch {
            rows.close()
            if let folder { Syscalls.close(folder) }
            throw ImageIOError(code: .encodeFailed, path: path, message: "\(error)")
        }
    }

    /// Whether an append waits while the saver's thread encodes the band's rows: a libvips
    /// saver that encodes rows as it takes them (``ImageFormat/saverEncodesRowsAsTaken``: PNG,
    /// TIFF, a JPEG keeping its metadata; an 8-bit JPEG keeping no more than its profile is
    /// libjpeg's, on the appending thread or in chunks). Such a writer's bands are kept short
    /// (``RenderSchedule/bandRows(forTile:reach:encoderWaits:)``).
    public var waitsForEncoder: Bool {
        guard case .saver = encoder else { return false }
        return format.saverEncodesRowsAsTaken
    }

    /// How the rows the saver takes are stored: the samples (8 or 16 bits) and bands (4 with
    /// alpha, else 3) of the file. Bands appended in this layout go to the saver as they are.
    public var layout: SampleLayout { SampleLayout(format: .file(bitDepth: bitDepth), channels: alpha ? 4 : 3) }

    /// Encodes the next rows: `pixels` is as wide as the image, holds samples in ``layout``
    /// (converted from `Float32` as `ImageWriter.encode` converts: ``AnyPixels/store(_:in:background:)``
    /// over ``background``), and its rows follow the rows appended before (its rectangle's
    /// origin does not matter, as for `ImageWriter.encode`). Returns once the saver has copied
    /// the rows out of `pixels`, which may then be reused.
    ///
    /// - Throws: the saver's `ImageIOError` when it failed (the temporary file is gone).
    public func append(_ pixels: AnyPixels) throws(ImageIOError) {
        let rect = pixels.rect
        precondition(
            rect.width == width && rowsWritten + rect.height <= height,
            "band \(rect) does not fit a \(width)x\(height) image written to row \(rowsWritten)")
        precondition(pixels.layout == layout, "a band in the file's layout")
        let rowBytes = width * pixels.channels * pixels.format.byteSize
        // The band's rows, packed: as they are, or copied together.
        func withPackedRows<T>(_ body: (UnsafeRawBufferPointer) -> T) -> T {
            if pixels.isPacked {
                let first = pixels.start(of: rect).first
                return withExtendedLifetime(pixels.storage) {
                    body(UnsafeRawBufferPointer(start: first, count: rowBytes * rect.height))
                }
            }
            var packed = [UInt8](repeating: 0, count: rowBytes * rect.height)
            packed.withUnsafeMutableBytes { out in
                var at = 0
                pixels.forEachRow(in: rect) { row, bytes in
                    (out.baseAddress! + at).copyMemory(from: row, byteCount: bytes)
                    at += bytes
                }
            }
            return packed.withUnsafeBytes(body)
        }
        let supplied: Bool
        switch encoder {
        case .saver(let rows):
            supplied = withPackedRows { rows.supply($0, rows: rect.height) }
        case .chunks(let queue, _, _):
            withPackedRows { queue.append($0, count: rect.height) }
            supplied = true
        case .direct(let jpeg, _, _):
            let (first, stride) = pixels.start(of: rect)
            let written = withExtendedLifetime(pixels.storage) {
                Result { () throws(LibvipsFailure) in try jpeg.write(first, stride: stride, count: rect.height) }
            }
            if case .failure(let error) = written {
                abandon()
                throw ImageIOError(code: .encodeFailed, path: path, message: error.message)
            }
            supplied = true
        }
        guard supplied else {
            try finish()
            throw ImageIOError(code: .encodeFailed, path: path, message: "the encoder stopped before the last row")
        }
        rowsWritten += rect.height
    }

    /// Waits for the saver to write the last row and puts the file in place.
    ///
    /// - Throws: the saver's or the atomic write's `ImageIOError` (then nothing was written).
    /// Finishing before the last row is appended is a failure: the rows missing are never
    /// written.
    public func finish() throws(ImageIOError) {
        _ = try finished().get()
    }

    /// Waits for the encoder of a writer ``inMemory(path:width:height:channels:sourceBitDepth:sourceHadAlpha:metadata:options:)``
    /// to take the last row, and returns the bytes it encoded.
    ///
    /// - Throws: the encoder's `ImageIOError`; finishing before the last row is a failure.
    public func finishEncoded() throws(ImageIOError) -> [UInt8] {
        guard let bytes = try finished().get() else { preconditionFailure("\(path): a writer to a file has no bytes") }
        return bytes
    }

    /// Stops the saver (no more rows come) and removes the temporary file; the output stays as
    /// it was.
    public func abandon() {
        switch encoder {
        case .saver(let rows):
            rows.close()
            _ = waitForSaver()
        case .chunks(let queue, let folder, _):
            outcome.withLock { done in
                guard done == nil else { return }
                queue.abandon()
                if let folder { Syscalls.close(folder) }
                done = .failure(ImageIOError(code: .encodeFailed, path: path, message: "abandoned"))
            }
        case .direct(_, let folder, _):
            outcome.withLock { done in
                guard done == nil else { return }
                if let folder { Syscalls.close(folder) }
                done = .failure(ImageIOError(code: .encodeFailed, path: path, message: "abandoned"))
            }
        }
    }

    /// The encoder's outcome once every row is in: the saver's, or the chunks' spliced and
    /// written (done once; a finish before the last row fails).
    private func finished() -> Result<[UInt8]?, ImageIOError> {
        switch encoder {
        case .saver(let rows):
            if rowsWritten < height { rows.close() }
            return waitForSaver()
        case .chunks(let queue, let folder, let temporaryFiles):
            return finishedInMemory(folder: folder, temporaryFiles: temporaryFiles, abandon: queue.abandon) {
                () throws(LibvipsFailure) in try queue.finish()
            }
        case .direct(let jpeg, let folder, let temporaryFiles):
            return finishedInMemory(folder: folder, temporaryFiles: temporaryFiles, abandon: {}) {
                () throws(LibvipsFailure) in try jpeg.finish()
            }
        }
    }

    /// The outcome of an encoder that encodes in memory on the appending thread (done once; a
    /// finish before the last row fails and calls `abandon`): the bytes `encoded` gives, or
    /// written to the file opened in `folder`.
    private func finishedInMemory(
        folder: Int32?, temporaryFiles: TemporaryFiles?, abandon: () -> Void,
        encoded: () throws(LibvipsFailure) -> [UInt8]
    ) -> Result<[UInt8]?, ImageIOError> {
        outcome.withLock { done in
            if let done { return done }
            let result = Result { () throws(ImageIOError) -> [UInt8]? in
                defer { if let folder { Syscalls.close(folder) } }
                guard rowsWritten == height else {
                    abandon()
                    throw ImageIOError(code: .encodeFailed, path: path, message: "the encoder stopped before the last row")
                }
                let bytes: [UInt8]
                do throws(LibvipsFailure) {
                    bytes = try encoded()
                } catch {
                    throw ImageIOError(code: .encodeFailed, path: path, message: error.message)
                }
                guard let folder else { return bytes }
                if let refusal = placing() { throw refusal }
                try AtomicFile.write(bytes, to: OutputPath(path), inFolder: folder, temporaryFiles: temporaryFiles)
                return nil
            }
            done = result
            return result
        }
    }

    /// The saver thread's outcome, waiting for it the first time.
    private func waitForSaver() -> Result<[UInt8]?, ImageIOError> {
        if let done = outcome.withLock({ $0 }) { return done }
        saved.wait()
        return outcome.withLock { $0! }
    }
}
