import ArgumentParser
import BlurfarmCore
import Foundation

/// `blurfarm submit`: hand jobs to the farm service.
struct Submit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Submit job manifests to the farm service (blurfarm serve) and print their ids.",
        discussion: """
            Each manifest is read, checked and planned by the server (it must be below one of \
            its --root folders); an invalid one prints the diagnostics of `blurfarm check` and \
            exits 2. With --wait, waits for every job (the progress line of `run` on a \
            terminal) and exits as `run` would: 0 when all completed, 3 when another process \
            (a cron `run`) held a job's lock, 2 when a manifest no longer checked when its turn \
            came, 1 when some output failed or a job was cancelled.
            """)

    @Argument(help: "Job manifests (paths the server can read).")
    var jobs: [String]

    @Option(help: "0–100, higher first (default 50).")
    var priority: Int?

    @Flag(help: "Wait for the jobs to finish and exit as `run` would.")
    var wait = false

    @OptionGroup var server: ServerOptions

    func validate() throws {
        if let priority, !(0...100).contains(priority) { throw ValidationError("--priority must be 0 to 100") }
    }

    func run() throws {
        let client = try server.client()
        var ids: [Int] = []
        for path in jobs {
            var body: [String: Any] = ["path": FarmOptions.absolute(path)]
            if let priority { body["priority"] = priority }
            let job = try client.expect("POST", "api/v1/jobs", json: body)
            let id = job["id"] as? Int ?? 0
            print(id)
            ids.append(id)
        }
        guard wait else { return }
        var statuses: [Int32] = []
        for id in ids {
            let job = try client.wait(for: id)
            report(job)
            statuses.append(ServerClient.status(of: job))
        }
        let status = ServerClient.combined(statuses)
        if status != ExitStatus.success { throw ExitCode(status) }
    }
}

/// `blurfarm jobs`: the service's queue.
struct Jobs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "List the farm service's jobs: id, state, priority, outputs done, name.")

    @Flag(help: "Print the API's JSON (docs/api.md).")
    var json = false

    @OptionGroup var server: ServerOptions

    func run() throws {
        let client = try server.client()
        let answer = try client.expect("GET", "api/v1/jobs")
        if json { return try printJSONObject(answer) }
        for job in answer["jobs"] as? [[String: Any]] ?? [] { print(ServerClient.line(job)) }
    }
}

/// `blurfarm job ID`: one job of the service.
struct Job: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "job",
        abstract: "Show one job of the farm service with its outputs' errors, or wait for it.",
        discussion: """
            With --wait, waits for the job (also across a restart of the server) and exits as \
            `run` would: 0 completed, 3 another process (a cron `run`) held its lock, 2 its \
            manifest no longer checked when its turn came, 1 some outputs failed or it was \
            cancelled.
            """)

    @Argument(help: "The job's id.")
    var id: Int

    @Flag(help: "Wait for the job to finish and exit as `run` would.")
    var wait = false

    @Flag(help: "Print the API's JSON (docs/api.md).")
    var json = false

    @OptionGroup var server: ServerOptions

    func run() throws {
        let client = try server.client()
        let job = wait ? try client.wait(for: id) : try client.expect("GET", "api/v1/jobs/\(id)")
        if json {
            try printJSONObject(job)
        } else {
            print(ServerClient.line(job))
            if let error = job["error"] as? String { printError(error) }
            let outputs = try client.expect("GET", "api/v1/jobs/\(id)/outputs")["outputs"] as? [[String: Any]] ?? []
            for output in outputs where output["state"] as? String == "failed" {
                print("  failed  \(ShownName.of(output["output"] as? String ?? "")): \(output["error"] as? String ?? "")")
            }
        }
        if wait, ServerClient.status(of: job) != ExitStatus.success { throw ExitCode(ServerClient.status(of: job)) }
    }
}

/// `blurfarm cancel ID`.
struct Cancel: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cancel", abstract: "Cancel a job of the farm service.")

    @Argument(help: "The job's id.")
    var id: Int

    @OptionGroup var server: ServerOptions

    func run() throws {
        print(ServerClient.line(try server.client().expect("POST", "api/v1/jobs/\(id)/cancel")))
    }
}

/// `blurfarm retry ID`.
struct Retry: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Queue a failed or cancelled job of the farm service again, rendering its failed outputs again.")

    @Argument(help: "The job's id.")
    var id: Int

    @OptionGroup var server: ServerOptions

    func run() throws {
        print(ServerClient.line(try server.client().expect("POST", "api/v1/jobs/\(id)/retry")))
    }
}

/// The summary of a finished job on standard error (`submit --wait`).
private func report(_ job: [String: Any]) {
    let name = ShownName.of(job["name"] as? String ?? "")
    let state = job["state"] as? String ?? ""
    let written = job["outputsWritten"] as? Int ?? 0
    let upToDate = job["outputsUpToDate"] as? Int ?? 0
    let failed = job["outputsFailed"] as? Int ?? 0
    FileHandle.standardError.write(Data(
        "\(name): \(state): \(written) written, \(upToDate) up to date, \(failed) failed\n".utf8))
    if let error = job["error"] as? String { printError(error) }
}

/// `object` (an answer of the API) as JSON on standard output, keys sorted.
private func printJSONObject(_ object: [String: Any]) throws {
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}
