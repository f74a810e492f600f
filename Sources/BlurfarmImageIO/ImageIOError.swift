import BlurfarmSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failure to read or write an image file, worded for the person running the job.
///
/// The description names the file first, then says what went wrong; where libvips gave a
/// reason, it is libvips's own message (first line, trimmed):
///
///     photos/a.jpg: VipsJpeg: Premature end of input file
///     photos/bomb.png: 60000x60000 is 3600000000 pixels, over the pixel limit of 1073741824 (setting pixel-limit, option --pixel-limit)
public struct ImageIOError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure this is, for callers that react differently to each.
    public enum Code: Sendable, Hashable, CaseIterable {
        /// The input file does not exist.
        case fileMissing
        /// The input file exists but cannot be opened for reading (permissions, or a folder).
        case fileUnreadable
        /// No libvips loader recognises the file's contents.
        case notAnImage
        /// The header's width × height is over the pixel limit; nothing was decoded.
        case overPixelLimit
        /// Decoding would allocate more memory than the limit (estimated from the header,
        /// ``DecodeMemory``, for a whole decode or one band by band); nothing was decoded.
        case overMemoryLimit
        /// libvips failed while decoding pixels or converting colour (truncated or corrupt data,
        /// a broken ICC profile).
        case decodeFailed
        /// The system refused libvips a thread while decoding (the user's process limit,
        /// `ulimit -u`, or the machine's): the file may be fine, and may decode when tried again.
        case systemRefusedThread
        /// The output path's extension is not one of `ImageFormat.extensions`.
        case unsupportedOutputExtension
        /// The output's folder does not exist (or is not a folder).
        case outputFolderMissing
        /// The output's folder exists but a file cannot be created in it.
        case outputFolderNotWritable
        /// A ``RootConfinement`` was given and the output's folder is not below any of its
        /// roots, or resolves outside them (a folder replaced by a link to elsewhere, `..`
        /// above the root): nothing was written.
        case outputOutsideRoots
        /// An input of a job confined to roots is not below them, or resolves outside them (its
        /// folder or itself replaced by a link to elsewhere): nothing of it was read.
        case inputOutsideRoots
        /// libvips failed to encode the pixels (e.g. a JPEG wider than 65535 pixels).
        case encodeFailed
        /// Writing, syncing or renaming the output file failed (an I/O error, a file too large).
        case writeFailed
        /// The output's file system has no room left, or the user's quota there is used up
        /// (ENOSPC, EDQUOT): every write there fails alike until room is made.
        case diskFull
        /// The output's file system is mounted read-only (EROFS; ext4 remounts so after errors):
        /// every write there fails alike until it is mounted read-write.
        case readOnlyFileSystem
        /// An argument was out of range (an option value, a buffer of the wrong size).
        case invalidArgument
        /// A libvips operation run by ``LibvipsReference`` failed.
        case operationFailed
        /// libvips could not start.
        case libvipsUnavailable
    }

    /// The kind of failure.
    public let code: Code
    /// The file the failure concerns, as the caller named it; nil for failures not tied to a file.
    public let path: String?
    /// What went wrong, without the file name.
    public let message: String

    /// A failure of kind `code` concerning `path`, explained by `message`.
    public init(code: Code, path: String?, message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    /// The failure of decoding `path` that libvips reported as `failure`: `.systemRefusedThread`
    /// when libvips or GLib says a thread could not be made ("unable to create thread",
    /// "Error creating thread: …"), else `.decodeFailed`.
    static func decoding(_ path: String, _ failure: LibvipsFailure) -> ImageIOError {
        let refused = failure.message.contains("unable to create thread") || failure.message.contains("creating thread")
        return ImageIOError(code: refused ? .systemRefusedThread : .decodeFailed, path: path, message: failure.message)
    }

    /// The failure of writing `path` that the system call reported as `error`: the file
    /// system's refusal when it is one (``refusal(_:)``: full, read-only), else `otherwise`;
    /// `message` says what was being done (default: which call failed, and why).
    package static func writing(
        _ path: String, _ error: SystemCallError, message: String? = nil, otherwise: Code = .writeFailed
    ) -> ImageIOError {
        ImageIOError(
            code: refusal(error.errno) ?? otherwise, path: path, message: message ?? "\(error.call) failed: \(error.reason)")
    }

    /// The code of a system call's `errno` when it says the file system refuses every write,
    /// not this one alone: `.diskFull` for no room (ENOSPC: no block or no inode) or no quota
    /// (EDQUOT), `.readOnlyFileSystem` for EROFS; nil for any other.
    package static func refusal(_ errno: Int32) -> Code? {
        switch errno {
        case ENOSPC, EDQUOT: .diskFull
        case EROFS: .readOnlyFileSystem
        default: nil
        }
    }

    /// Whether every write to the file system this one went to would fail alike (``refusal(_:)``):
    /// a job writes nothing more there.
    public var refusesEveryWriteThere: Bool { code == .diskFull || code == .readOnlyFileSystem }

    /// "path: message", or just the message when no file is concerned.
    public var description: String {
        if let path { return "\(path): \(message)" }
        return message
    }
}

extension ImageIOError.Code {
    /// The code its name names (`"\(code)"`, as reports and the wire protocol give it).
    public init?(name: String) {
        guard let code = Self.allCases.first(where: { "\($0)" == name }) else { return nil }
        self = code
    }
}

extension ImageIOError {
    /// Whether the input itself is at fault (its bytes are corrupt, not an image, or too many
    /// pixels): the failures a run remembers. A missing or unreadable file, a thread the system
    /// refused, or anything else, may go away without the file changing.
    public var isTheInputsFault: Bool {
        switch code {
        case .notAnImage, .overPixelLimit, .decodeFailed: true
        default: false
        }
    }
}
