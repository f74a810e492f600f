/// The farm's settings, read from `config/blurfarm.conf` (or the file named by `--config`
/// or `$BLURFARM_CONFIG`). `docs/configuration.md` describes every key.
public struct FarmConfiguration: Hashable, Sendable {
    /// Worker processes; `nil` means one per processor core.
    public var workers: Int?
    /// The tile side in pixels for jobs that name none (0: one tile per image).
    public var tile: Int
    /// How many images may be decoded at once: the bound on pixel memory.
    public var decodedImages: Int
    /// The largest image accepted, in pixels (width × height), checked from the header
    /// before decoding.
    public var pixelLimit: Int
    /// The folder for reports, locks and output records, as the file gives it (relative paths
    /// resolved against the configuration file's folder, so this is that joined path); `nil`
    /// when it gives none: then the user's state folder (``stateFolder(environment:)``).
    public var state: String?
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
        pixelLimit: Int = Self.defaultPixelLimit, state: String? = nil,
        pluginFolders: [String] = [], taskTimeout: Double? = nil,
        heartbeatTimeout: Double = Self.defaultHeartbeatTimeout, retries: Int = Self.defaultRetries
    ) {
        self.workers = workers
        self.tile = tile
        self.decodedImages = decodedImages
        self.pixelLimit = pixelLimit
        self.state = state
        self.pluginFolders = pluginFolders
        self.taskTimeout = taskTimeout
        self.heartbeatTimeout = heartbeatTimeout
        self.retries = retries
    }

    /// Tiles of 512 × 512 pixels (4 MiB of Float32 RGBA): in the worker pool on a 4K image the
    /// filter stage runs 1.6 times faster with a second worker at 512 against 1.5 times at 256
    /// (fewer tasks, fewer round trips; `blurfarm bench --farm`, docs/performance.md), and in
    /// process and on the 1080p batch 512 is as fast as 256. Still small enough to spread an
    /// image over the workers (32 tiles in 4K).
    public static let defaultTile = 512
    /// Two decoded images at once: one being rendered while the next decodes.
    public static let defaultDecodedImages = 2
    /// 16383 × 16383 pixels, libvips's and Pillow's usual decompression-bomb bound.
    public static let defaultPixelLimit = 268_402_689
    /// Ten seconds of silence before a worker counts as hung.
    public static let defaultHeartbeatTimeout = 10.0
    /// The plugin folder `{build}`: the folder that holds the running `blurfarm` executable,
    /// where `swift build` puts the example plugins (`libvignette.so`, `libzoom.so`), whatever
    /// the build's configuration and scratch path. The command line resolves it.
    public static let buildFolder = "{build}"

    /// The plugin folders with ``buildFolder`` replaced by `executableFolder`.
    public func pluginFolders(executableFolder: String) -> [String] {
        pluginFolders.map { $0 == Self.buildFolder ? executableFolder : $0 }
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

    /// Three retries before a tile's image is marked failed.
    public static let defaultRetries = 3
}
