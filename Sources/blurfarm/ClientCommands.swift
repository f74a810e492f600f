import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmAPI
import Foundation

/// `blurfarm submit`: hand jobs to the farm service.
struct Submit: AsyncFarmCommand {
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

    func execute() async throws {
        let client = try server.client()
        var ids: [Int64] = []
        for path in jobs {
            let request = SubmitRequest(path: FarmOptions.absolute(path), priority: priority)
            let id = try await client.submit(request).job.id ?? 0
            print(id)
            ids.append(id)
        }
        guard wait else { return }
        var ending = JobView.Ending.completed
        for id in ids {
            let job = try await client.waitDrawingProgress(id)
            FileHandle.standardError.write(Data((job.summary + "\n").utf8))
            if let error = job.job.error { printError(error) }
            ending = max(ending, job.ending)
        }
        if ending != .completed { throw ExitCode(ending.exitStatus) }
    }
}

/// `blurfarm jobs`: the service's queue.
struct Jobs: AsyncFarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "List the farm service's jobs: id, state, priority, outputs done, name.")

    @Flag(help: "Print the API's JSON (docs/api.md).")
    var json = false

    @OptionGroup var server: ServerOptions

    func execute() async throws {
        let client = try server.client()
        let jobs = try await client.jobs()
        if json { return try printAnswer(JobList(jobs: jobs)) }
        for job in jobs { print(job.line) }
    }
}

/// `blurfarm job ID`: one job of the service.
struct Job: AsyncFarmCommand {
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

    func execute() async throws {
        let client = try server.client()
        let id = Int64(self.id)
        let job = wait ? try await client.waitDrawingProgress(id) : try await client.job(id)
        if json {
            // The answer of `GET /api/v1/jobs/{id}` (a wait ends on an event's job, without the
            // manifest's text).
            try printAnswer(wait ? try await client.job(id) : job)
        } else {
            print(job.line)
            if let error = job.job.error { printError(error) }
            for line in try await client.outputs(of: id, states: [.failed]).compactMap(\.failureLine) { print(line) }
        }
        if wait, job.ending != .completed { throw ExitCode(job.ending.exitStatus) }
    }
}

/// `blurfarm cancel ID`.
struct Cancel: AsyncFarmCommand {
    static let configuration = CommandConfiguration(commandName: "cancel", abstract: "Cancel a job of the farm service.")

    @Argument(help: "The job's id.")
    var id: Int

    @OptionGroup var server: ServerOptions

    func execute() async throws {
        let client = try server.client(), id = Int64(self.id)
        print(try await client.steer(id, .cancel).line)
    }
}

/// `blurfarm retry ID`.
struct Retry: AsyncFarmCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Queue a failed or cancelled job of the farm service again, rendering its failed outputs again.")

    @Argument(help: "The job's id.")
    var id: Int

    @OptionGroup var server: ServerOptions

    func execute() async throws {
        let client = try server.client(), id = Int64(self.id)
        print(try await client.steer(id, .retry).line)
    }
}

/// `value` (an answer of the API) as JSON on standard output: keys sorted, indented.
private func printAnswer(_ value: some Encodable) throws {
    FileHandle.standardOutput.write(try APIJSON.indented(value) + Data("\n".utf8))
}
