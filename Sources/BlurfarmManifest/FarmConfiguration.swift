import BlurfarmCore
import Foundation

/// The farm's settings, read from `config/blurfarm.conf` (or the file named by `--config`
/// or `$BLURFARM_CONFIG`). `docs/configuration.md` describes every key.
public struct FarmConfiguration: Hashable, Sendable {
    /// Worker processes; `nil` means one per processor core.
    public var workers: Int?
    /// The tile side in pixels for jobs that name none (0: one tile per image).
    public var tile: Int
    /// How many images may be decoded at once: the bound on pixel memory.
    public var decodedImages: Int
    /// The most pixels an input may have to go to one worker whole (decoded, filtered and
    /// encoded there) rather than tile by tile or band by band across the workers; 0 for never.
    public var wholeImagePixels: Int = Self.defaultWholeImagePixels
    /// The largest image accepted, in pixels (width × height), checked from the header
    /// before decoding: the guard against decompression bombs.
    public var pixelLimit: Int
    /// The most outputs one job may ask for (inputs × every size of every format of every
    /// variant), checked before it is planned: a manifest asking more is refused, naming the
    /// limit (`max-outputs`).
    public var maxOutputs: Int = Self.defaultMaxOutputs
    /// The most bytes decoding may allocate, checked against the estimate from the header
    /// before decoding (shared by the `decodedImages` decodes of `run`); `nil` for all the
    /// process may use (the physical memory, `ulimit -v`/`-d`, the cgroup's `memory.max`).
    public var memoryLimit: Int?
    /// The folder for reports, locks and output records, as the file gives it (relative paths
    /// resolved against the configuration file's folder, so this is that joined path); `nil`
    /// when it gives none: then the user's state folder (``stateFolder(environment:)``).
    public var state: String?
    /// The reports the state folder keeps of each job (`reports-kept`): after a job's report is
    /// written there, its oldest beyond this many are removed.
    public var reportsKept: Int = Self.defaultReportsKept
    /// The finished jobs of one manifest the service's queue keeps (`jobs-kept`): after one of
    /// them finishes, the oldest beyond this many are removed with their outputs' rows.
    public var jobsKept: Int = Self.defaultJobsKept
    /// Folders plugins are loaded from, in order; relative paths resolved as for `state`.
    /// ``buildFolder`` stands for the folder of the running `blurfarm` executable.
    public var pluginFolders: [String]
    /// Seconds a task may run before its worker is stopped and the task retried; `nil` for
    /// the adaptive default (the coordinator's `TaskTimeout.adaptive`).
    public var taskTimeout: Double?
    /// Seconds without a heartbeat after which a worker counts as hung.
    public var heartbeatTimeout: Double
    /// How often a failed task is retried before its image is marked failed.
    public var retries: Int
    /// The farm service the client commands (`submit`, `jobs`, …) talk to, e.g.
    /// `http://127.0.0.1:8765`; `nil` for that default.
    public var server: String? = nil
    /// The file holding the service's token, resolved as for `state`; `nil` for none.
    public var tokenFile: String? = nil

    /// A configuration; every argument has the documented default.
    public init(
        workers: Int? = nil, tile: Int = Self.defaultTile, decodedImages: Int = Self.defaultDecodedImages,
        pixelLimit: Int = Self.defaultPixelLimit, memoryLimit: Int? = nil, state: String? = nil,
        pluginFolders: [String] = [], taskTimeout: Double? = nil,
        heartbeatTimeout: Double = Self.defaultHeartbeatTimeout, retries: Int = Self.defaultRetries
    ) {
        self.workers = workers
        self.tile = tile
        self.decodedImages = decodedImages
        self.pixelLimit = pixelLimit
        self.memoryLimit = memoryLimit
        self.state = state
        self.pluginFolders = pluginFolders
        self.taskTimeout = taskTimeout
        self.heartbeatTimeout = heartbeatTimeout
        self.retries = retries
    }

    /// ``PoolSchedule/wholeImagePixels``.
    public static let defaultWholeImagePixels = PoolSchedule.wholeImagePixels

    /// The tile side unless the configuration says otherwise (``RenderSchedule/tileSize``).
    public static var defaultTile: Int { RenderSchedule.tileSize }
    /// Two decoded images at once: one being rendered while the next decodes.
    public static let defaultDecodedImages = 2
    /// 2^30 pixels (32768 × 32768, a gigapixel), as ImageIO's `ImageReader.defaultPixelLimit`:
    /// a 300-megapixel photo and a 30000 × 30000 image pass, a 60000 × 60000 decompression
    /// bomb does not (docs/security.md).
    public static let defaultPixelLimit = 1 << 30

    /// The bytes `text` says: a whole number of bytes, or a number with a unit: `kB`, `MB`,
    /// `GB`, `TB` (powers of 1000) or `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024), the `B`
    /// optional (`8G` is 8 GB), a space allowed before it: `16GB`, `1.5 GiB`, `512M`. Nil for
    /// anything else, nothing above 0, or more than an `Int` holds.
    public static func byteCount(_ text: String) -> Int? {
        let units: [(String, Double)] = [
            ("KIB", 0x1p10), ("MIB", 0x1p20), ("GIB", 0x1p30), ("TIB", 0x1p40),
            ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12), ("K", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12),
            ("B", 1),
        ]
        let upper = text.uppercased()
        let (number, scale) =
            units.first { upper.hasSuffix($0.0) }.map { (String(upper.dropLast($0.0.count)), $0.1) } ?? (upper, 1)
        let digits = number.hasSuffix(" ") ? String(number.dropLast()) : number
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let value = Double(digits), value > 0
        else { return nil }
        if scale == 1, let exact = Int(digits) { return exact }
        let bytes = (value * scale).rounded(.down)
        guard bytes >= 1, bytes < 0x1p63 else { return nil }
        return Int(bytes)
    }
    /// ``PoolSchedule/heartbeatTimeout``.
    public static let defaultHeartbeatTimeout = PoolSchedule.heartbeatTimeout
    /// The plugin folder `{build}`: the folder that holds the running `blurfarm` executable,
    /// where `swift build` puts the example plugins (`libvignette.so`, `libzoom.so`), whatever
    /// the build's configuration and scratch path. The command line resolves it.
    public static let buildFolder = "{build}"

    /// The plugin folders with ``buildFolder`` replaced by `executableFolder`.
    public func pluginFolders(executableFolder: String) -> [String] {
        pluginFolders.map { $0 == Self.buildFolder ? executableFolder : $0 }
    }

    /// The configuration file in force: `given` (`--config`), else `$BLURFARM_CONFIG` in
    /// `environment` when not empty, else `shipped` (the checkout's or installation's); nil for
    /// the built-in defaults.
    public static func path(given: String?, environment: [String: String], shipped: @autoclosure () -> String?) -> String? {
        given ?? environment["BLURFARM_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } ?? shipped()
    }

    /// The configuration with `pixelLimit`, `memoryLimit` in bytes and `maxOutputs` in place of
    /// its own where given (the command line's admission limits).
    public func limited(pixelLimit: Int?, memoryLimit: Int?, maxOutputs: Int? = nil) -> FarmConfiguration {
        var configuration = self
        configuration.pixelLimit = pixelLimit ?? self.pixelLimit
        configuration.memoryLimit = memoryLimit ?? self.memoryLimit
        configuration.maxOutputs = maxOutputs ?? self.maxOutputs
        return configuration
    }

    /// Ten million outputs: a million photos in ten variants. A plan is held in parts on disk,
    /// about 25 bytes an output left in memory (ten million planned by `check --status` in 64 s
    /// and 300 MB, a million in 6.3 s and 71 MB: docs/configuration.md), so a library of a
    /// million photos plans within this bound; a job much larger is a mistaken glob more often
    /// than a library (and its report is about 3 GB); a larger one says so in `max-outputs`.
    /// (A million, while a plan held every output in memory: 2 GB.)
    public static let defaultMaxOutputs = 10_000_000

    /// Ten reports of each job: the last ten runs that did work (a run with nothing to do
    /// writes none), a cron job's recent history. A report lists the outputs its run did
    /// something to (those up to date counted: a first run of `bench scale`'s 100k library,
    /// 125 MB; a run that made one output, 1 KB), so a folder that kept them all would grow
    /// with every run that changed one photo.
    public static let defaultReportsKept = 10
    /// ``jobsKept`` unless the file says otherwise: as many as the reports of a job.
    public static let defaultJobsKept = 10

    /// The configuration with its ``state`` and ``pluginFolders`` made absolute by `absolute`
    /// (``buildFolder`` left as it is).
    public func withFolders(madeAbsoluteBy absolute: (String) -> String) -> FarmConfiguration {
        var configuration = self
        configuration.state = state.map(absolute)
        configuration.pluginFolders = pluginFolders.map { $0 == Self.buildFolder ? $0 : absolute($0) }
        return configuration
    }

    /// The state folder in force: ``state``, else the user's state folder of the XDG Base
    /// Directory specification, `xdgStateHome/blurfarm` (`$XDG_STATE_HOME`), else
    /// `home/.local/state/blurfarm` (an empty or relative `XDG_STATE_HOME` is ignored, as the
    /// specification says); never a folder inside the checkout.
    public func stateFolder(xdgStateHome: String?, home: String) -> String {
        if let state { return state }
        if let xdgStateHome, xdgStateHome.hasPrefix("/") { return xdgStateHome + "/blurfarm" }
        return (home.hasSuffix("/") ? home : home + "/") + ".local/state/blurfarm"
    }

    /// ``stateFolder(xdgStateHome:home:)`` with `XDG_STATE_HOME` and `HOME` of `environment` (the
    /// home folder from the password database when `HOME` is unset or empty).
    public func stateFolder(environment: [String: String]) -> String {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return stateFolder(xdgStateHome: environment["XDG_STATE_HOME"], home: home)
    }

    /// ``PoolSchedule/retries``.
    public static let defaultRetries = PoolSchedule.retries
}
