import BlurfarmAPI

/// What happens to a job: a request through the API, the scheduler's turn, or the farm's word.
public enum JobEvent: Sendable, Equatable {
    /// The scheduler hands the job to the farm.
    case dispatched
    /// A person asks to pause it.
    case pauseRequested
    /// A person asks to resume it.
    case resumeRequested
    /// A person asks to cancel it.
    case cancelRequested
    /// A person asks to render its failed outputs again.
    case retryRequested
    /// The farm finished the job: `failed` outputs failed; `cancelled` when it stopped on a cancel.
    case farmFinished(failed: Int, cancelled: Bool)
    /// The farm could not take the job (its manifest no longer plans, another run holds its
    /// lock): the job fails with the reason.
    case farmRefused
    /// The server started again after it stopped (or was killed) with the job unfinished:
    /// the farm it was in is gone.
    case serverRestarted
}

/// What the service must do to the farm after a transition.
public enum JobAction: Sendable, Equatable {
    /// Plan the job again and submit it (retrying its failed outputs when it was retried).
    case submitToFarm
    /// Stop starting new outputs of it.
    case pauseInFarm
    /// Start its outputs again.
    case resumeInFarm
    /// Drop its tiles from the farm's queue.
    case cancelInFarm
}

/// An event that does not apply to the job in its state (pausing a completed job, say): the
/// API's 409.
public struct RefusedTransition: Error, Sendable, Equatable, CustomStringConvertible {
    /// The job's state.
    public let state: JobState
    /// What was asked.
    public let event: JobEvent

    /// The refusal of `event` in `state`.
    public init(state: JobState, event: JobEvent) {
        self.state = state
        self.event = event
    }

    public var description: String {
        let what: String
        switch event {
        case .dispatched: what = "start"
        case .pauseRequested: what = "pause"
        case .resumeRequested: what = "resume"
        case .cancelRequested: what = "cancel"
        case .retryRequested: what = "retry"
        case .farmFinished, .farmRefused: what = "finish"
        case .serverRestarted: what = "restart"
        }
        return "cannot \(what) a job that is \(state.rawValue)"
    }
}

/// The job state machine, pure: an event in, the new state and the actions for the farm out.
/// No I/O, no clock; the service stores the result and carries out the actions.
public struct JobMachine: Sendable, Equatable, Codable {
    /// The job's state.
    public private(set) var state: JobState
    /// Whether the farm has the job (submitted and not finished): a paused job may be in it
    /// (paused while active) or not (paused while queued).
    public private(set) var inFarm: Bool
    /// Whether the next submission renders the outputs that failed before (a retry).
    public private(set) var retryFailed: Bool

    /// A machine in `state`; `inFarm` and `retryFailed` as stored.
    public init(state: JobState = .queued, inFarm: Bool = false, retryFailed: Bool = false) {
        self.state = state
        self.inFarm = inFarm
        self.retryFailed = retryFailed
    }

    /// Applies `event`: the actions the farm must see, or the refusal when the event does not
    /// apply in the current state (the machine is then unchanged).
    public mutating func handle(_ event: JobEvent) throws(RefusedTransition) -> [JobAction] {
        let actions = try transition(event)
        // A finished job has nothing left to retry until a person asks again.
        if state.isFinished { retryFailed = false }
        return actions
    }

    private mutating func transition(_ event: JobEvent) throws(RefusedTransition) -> [JobAction] {
        switch (state, event) {
        case (.queued, .dispatched):
            state = .active
            inFarm = true
            return [.submitToFarm]
        case (.queued, .pauseRequested):
            state = .paused
            return []
        case (.queued, .cancelRequested):
            state = .cancelled
            return []
        case (.active, .pauseRequested):
            state = .paused
            return [.pauseInFarm]
        case (.paused, .resumeRequested):
            state = inFarm ? .active : .queued
            return inFarm ? [.resumeInFarm] : []
        case (.paused, .cancelRequested) where !inFarm:
            state = .cancelled
            return []
        case (.active, .cancelRequested), (.paused, .cancelRequested):
            state = .cancelling
            return [.cancelInFarm]
        case (.active, .farmFinished(let failed, let cancelled)), (.paused, .farmFinished(let failed, let cancelled)):
            inFarm = false
            state = cancelled ? .cancelled : failed > 0 ? .failed : .completed
            return []
        case (.active, .farmRefused):
            inFarm = false
            state = .failed
            return []
        case (.paused, .farmRefused) where inFarm:
            // Paused while it planned, and its plan failed (or the farm refused it).
            inFarm = false
            state = .failed
            return []
        case (.cancelling, .farmFinished), (.cancelling, .farmRefused):
            inFarm = false
            state = .cancelled
            return []
        case (.failed, .retryRequested), (.cancelled, .retryRequested):
            state = .queued
            retryFailed = true
            return []
        case (.active, .serverRestarted):
            state = .queued
            inFarm = false
            return []
        case (.paused, .serverRestarted):
            inFarm = false
            return []
        case (.cancelling, .serverRestarted):
            state = .cancelled
            inFarm = false
            return []
        case (.queued, .serverRestarted):
            return []
        case (_, .serverRestarted) where state.isFinished:
            return []
        default:
            throw RefusedTransition(state: state, event: event)
        }
    }
}

extension QueueJob {
    /// The machine of its state (``JobMachine``): its state, whether the farm has it, whether it retries.
    public var machine: JobMachine {
        get { JobMachine(state: state, inFarm: inFarm, retryFailed: retryFailed) }
        set {
            state = newValue.state
            inFarm = newValue.inFarm
            retryFailed = newValue.retryFailed
        }
    }
}
