/// The answer of `GET /api/v1/jobs`: jobs in queue order.
public struct JobList: Codable, Sendable {
    public var jobs: [JobView]

    public init(jobs: [JobView]) { self.jobs = jobs }
}

/// The answer of `GET /api/v1/jobs/{id}/outputs`: a page of the outputs started since the job
/// was last handed to the farm, by path.
public struct OutputList: Codable, Sendable {
    public var outputs: [QueueOutput]
    /// The page's last output when more follow it: asked again with `after` set to it, the
    /// answer goes on from there. Absent on the last page.
    public var next: String?

    public init(outputs: [QueueOutput], next: String? = nil) { (self.outputs, self.next) = (outputs, next) }
}

/// The answer of `GET /api/v1/workers`.
public struct WorkerList: Codable, Sendable {
    public var workers: [WorkerInfo]

    public init(workers: [WorkerInfo]) { self.workers = workers }
}
