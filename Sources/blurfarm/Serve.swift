import BlurfarmCore
import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmCoordinator
import BlurfarmFarm
import BlurfarmServer
import BlurfarmSystem
import Foundation

/// `blurfarm serve`: the farm service (docs/serve.md): one worker pool for every job, a
/// durable queue, the HTTP API (docs/api.md) and the status page.
struct Serve: AsyncFarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the farm service: a job queue with an HTTP API, live progress and a status page.",
        discussion: """
            Takes jobs over HTTP (docs/api.md; `blurfarm submit` is a client), keeps them in a \
            queue that survives restarts (a SQLite database in the state folder), renders them \
            on one pool of workers by priority, then submission order, and shows them live at \
            http://ADDRESS/. Jobs may read and write only below the --root folders (default: \
            the folder it starts in).

            It listens on 127.0.0.1 unless told otherwise; any other address needs \
            --token-file. SIGTERM or SIGINT stops it: no new output starts, those rendering \
            finish (for at most --grace seconds) and it exits once they are written; unfinished \
            jobs are taken up again at the next start. Exit status: 0 after a signal, 2 for invalid options or configuration, 1 \
            when the queue cannot be opened or the address cannot be listened on.
            """)

    @Option(help: ArgumentHelp("The address and port to listen on (port 0: any free port).", valueName: "host:port"))
    var listen = "127.0.0.1:8765"

    @Option(help: "Worker processes of the pool (default: the configuration's workers, else one per core).")
    var workers: Int?

    @Option(name: .customLong("root"), help: ArgumentHelp(
        "A folder submitted jobs may read and write below (repeat for more; default: the working folder).",
        valueName: "folder"))
    var roots: [String] = []

    @Option(help: ArgumentHelp(
        "A file holding the bearer token every API request must carry (required on an address other than loopback).",
        valueName: "file"))
    var tokenFile: String?

    @Option(help: ArgumentHelp("The queue's database (default: serve/queue.sqlite in the state folder).", valueName: "file"))
    var database: String?

    @Option(help: ArgumentHelp(
        "The URL a reverse proxy serves it at (repeat for more): its host is accepted as the Host and as a page's origin.",
        valueName: "url"))
    var publicURL: [String] = []

    @Option(help: "The most seconds the outputs being rendered get to finish after SIGTERM or SIGINT.")
    var grace: Double = 30

    @Option(help: ArgumentHelp(
        "The most HTTP connections at once (default and most: half the descriptors the process may open, less 256 kept for the farm); when all are taken, the one waiting longest for a request's head is closed for a newcomer.",
        valueName: "count"))
    var maxConnections: Int?

    @Option(help: ArgumentHelp(
        "The most seconds a request's head may take to arrive whole, from its first byte (the first request's: from the connection's start).",
        valueName: "seconds"))
    var headTimeout: Double = Double(ServerSettings().headTimeout.components.seconds)

    @Option(help: ArgumentHelp(
        "The most HTTP connections at once from one address (behind a reverse proxy every client is the proxy's).",
        valueName: "count"))
    var maxConnectionsPerAddress = ServerSettings().maxConnectionsPerAddress

    @OptionGroup var farm: FarmOptions

    func validate() throws {
        if let workers, workers < 0 { throw ValidationError("--workers must be 0 or more") }
        if grace < 0 { throw ValidationError("--grace must be 0 or more") }
        if let maxConnections, maxConnections < 1 { throw ValidationError("--max-connections must be at least 1") }
        if !(headTimeout > 0 && headTimeout <= 3600) { throw ValidationError("--head-timeout must be more than 0 and at most 3600 seconds") }
        if maxConnectionsPerAddress < 1 { throw ValidationError("--max-connections-per-address must be at least 1") }
        if ServerSettings.address(listen) == nil {
            throw ValidationError("--listen must be host:port, e.g. 127.0.0.1:8765")
        }
        for url in publicURL where ServerSettings.publicHost(url) == nil {
            throw ValidationError("--public-url must be http(s)://host[:port], not '\(url)'")
        }
    }

    func execute() async throws {
        let (host, port) = ServerSettings.address(listen)!
        let token = try CommandError.invalid { () throws(OptionError) in try tokenFile.map(ServerSettings.token(inFile:)) }
        if token == nil, !ServerSettings.isLoopback(host) {
            throw CommandError("listening on \(host) needs a token: --token-file FILE (docs/serve.md)", exitCode: ExitStatus.invalid)
        }
        let configuration = try farm.loadOrExit()
        let registry = farm.registry(for: configuration)
        let roots: Roots
        do throws(PathOutsideRoots) {
            roots = try Roots(self.roots.isEmpty ? [FileManager.default.currentDirectoryPath] : self.roots)
        } catch {
            throw CommandError("--root \(error)", exitCode: ExitStatus.invalid)
        }
        FarmServer.raiseDescriptorLimit()
        let jobFarm = try WorkerChoice.chosen(workers: workers, threads: nil, configuration: configuration, plugins: [])
        let logger = farm.logger()
        let state = farm.stateFolder(configuration)
        let databasePath = database.map(FarmOptions.absolute) ?? state + "/serve/queue.sqlite"
        do {
            try FileManager.default.createDirectory(
                atPath: PathName.folder(of: databasePath), withIntermediateDirectories: true)
            let store = try QueueStore(path: databasePath)
            let bridge = FarmBridge(
                settings: jobFarm.farmSettings(farm: farm, configuration: configuration, stop: StopRequest(), logger: logger))
            var loader = JobLoader(
                configuration: configuration, registry: registry, configurationPath: farm.configurationPath)
            // Served jobs keep their inputs' sizes in their records, as `run`'s do.
            loader.inputSizes = state
            loader.planFolder = state
            let service = FarmService(store: store, jobFarm: bridge, loader: loader, roots: roots, logger: logger)
            let settings = ServerSettings(
                host: host, port: port, token: token, webFolder: Self.webFolder, grace: .milliseconds(Int64(grace * 1000)),
                publicHosts: publicURL.compactMap(ServerSettings.publicHost),
                headTimeout: .milliseconds(Int64(headTimeout * 1000)), maxConnections: maxConnections,
                maxConnectionsPerAddress: maxConnectionsPerAddress)
            try await FarmServer.run(service: service, jobFarm: bridge, settings: settings, logger: logger) { port in
                let shown = host.contains(":") ? "[\(host)]" : host
                FileHandle.standardOutput.write(Data("blurfarm serve: listening on http://\(shown):\(port)\n".utf8))
            }
        } catch {
            // The queue's database or its folder, the address: one line each.
            throw CommandError("\(error)")
        }
    }

    /// The status page's files: `web/` of the checkout the executable was built in, or
    /// `share/blurfarm/web/` of the prefix it is installed under (scripts/install.sh).
    static var webFolder: String? {
        (Installation.shipped("web/index.html") ?? Installation.shipped("share/blurfarm/web/index.html")).map {
            PathName.folder(of: $0)
        }
    }
}
