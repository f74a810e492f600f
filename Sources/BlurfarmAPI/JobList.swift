/// The answer of `GET /api/v1/jobs`: jobs in queue order.
public struct JobList: Codable, Sendable {
    public var jobs: [JobView]

    public init(jobs: [JobView]) { self.jobs = jobs }
}

/// The answer of `GET /api/v1/jobs/{id}/outputs`: the outputs started since the job was last
/// handed to the farm.
public struct OutputList: Codable, Sendable {
    public var outputs: [QueueOutput]

    public init(outputs: [QueueOutput]) { self.outputs = outputs }
}

/// The answer of `GET /api/v1/workers`.
public struct WorkerList: Codable, Sendable {
    public var workers: [WorkerInfo]

    public init(workers: [WorkerInfo]) { self.workers = workers }
}
