import BlurfarmAPI
import BlurfarmServer
import Testing

/// The job state machine, transition by transition: each test is named after the transition
/// it checks (state, event → state, actions).
@Suite struct JobMachineTests {
    /// The machine after `event` from `state`, and the actions.
    static func after(
        _ event: JobEvent, from state: JobState, inFarm: Bool = false, retryFailed: Bool = false
    ) throws -> (JobMachine, [JobAction]) {
        var machine = JobMachine(state: state, inFarm: inFarm, retryFailed: retryFailed)
        let actions = try machine.handle(event)
        return (machine, actions)
    }

    @Test func queuedDispatchedBecomesActiveAndIsSubmitted() throws {
        let (machine, actions) = try Self.after(.dispatched, from: .queued)
        #expect(machine == JobMachine(state: .active, inFarm: true))
        #expect(actions == [.submitToFarm])
    }

    @Test func retriedJobDispatchedIsSubmittedRetryingItsFailedOutputs() throws {
        let (machine, actions) = try Self.after(.dispatched, from: .queued, retryFailed: true)
        #expect(machine == JobMachine(state: .active, inFarm: true, retryFailed: true))
        #expect(actions == [.submitToFarm])
    }

    @Test func queuedPausedBecomesPausedOutsideTheFarm() throws {
        let (machine, actions) = try Self.after(.pauseRequested, from: .queued)
        #expect(machine == JobMachine(state: .paused, inFarm: false))
        #expect(actions.isEmpty)
    }

    @Test func queuedCancelledBecomesCancelledWithoutTheFarm() throws {
        let (machine, actions) = try Self.after(.cancelRequested, from: .queued)
        #expect(machine == JobMachine(state: .cancelled))
        #expect(actions.isEmpty)
    }

    @Test func activePausedBecomesPausedInTheFarm() throws {
        let (machine, actions) = try Self.after(.pauseRequested, from: .active, inFarm: true)
        #expect(machine == JobMachine(state: .paused, inFarm: true))
        #expect(actions == [.pauseInFarm])
    }

    @Test func pausedInTheFarmResumedBecomesActive() throws {
        let (machine, actions) = try Self.after(.resumeRequested, from: .paused, inFarm: true)
        #expect(machine == JobMachine(state: .active, inFarm: true))
        #expect(actions == [.resumeInFarm])
    }

    @Test func pausedOutsideTheFarmResumedBecomesQueued() throws {
        let (machine, actions) = try Self.after(.resumeRequested, from: .paused)
        #expect(machine == JobMachine(state: .queued))
        #expect(actions.isEmpty)
    }

    @Test func activeCancelledBecomesCancellingAndIsCancelledInTheFarm() throws {
        let (machine, actions) = try Self.after(.cancelRequested, from: .active, inFarm: true)
        #expect(machine == JobMachine(state: .cancelling, inFarm: true))
        #expect(actions == [.cancelInFarm])
    }

    @Test func pausedInTheFarmCancelledBecomesCancelling() throws {
        let (machine, actions) = try Self.after(.cancelRequested, from: .paused, inFarm: true)
        #expect(machine == JobMachine(state: .cancelling, inFarm: true))
        #expect(actions == [.cancelInFarm])
    }

    @Test func pausedOutsideTheFarmCancelledBecomesCancelled() throws {
        let (machine, actions) = try Self.after(.cancelRequested, from: .paused)
        #expect(machine == JobMachine(state: .cancelled))
        #expect(actions.isEmpty)
    }

    @Test func cancellingFinishedBecomesCancelled() throws {
        let (machine, actions) = try Self.after(.farmFinished(failed: 0, cancelled: true), from: .cancelling, inFarm: true)
        #expect(machine == JobMachine(state: .cancelled))
        #expect(actions.isEmpty)
    }

    @Test func cancellingFinishedWithoutCancelStillBecomesCancelled() throws {
        // The last output finished as the cancel arrived: the person asked to cancel.
        let (machine, _) = try Self.after(.farmFinished(failed: 0, cancelled: false), from: .cancelling, inFarm: true)
        #expect(machine.state == .cancelled)
    }

    @Test func activeFinishedWithoutFailuresBecomesCompleted() throws {
        let (machine, actions) = try Self.after(.farmFinished(failed: 0, cancelled: false), from: .active, inFarm: true)
        #expect(machine == JobMachine(state: .completed))
        #expect(actions.isEmpty)
    }

    @Test func activeFinishedWithFailuresBecomesFailed() throws {
        let (machine, _) = try Self.after(.farmFinished(failed: 2, cancelled: false), from: .active, inFarm: true)
        #expect(machine == JobMachine(state: .failed))
    }

    @Test func pausedInTheFarmFinishedBecomesCompleted() throws {
        // Its last outputs were running when it was paused.
        let (machine, _) = try Self.after(.farmFinished(failed: 0, cancelled: false), from: .paused, inFarm: true)
        #expect(machine == JobMachine(state: .completed))
    }

    @Test func activeRefusedByTheFarmBecomesFailed() throws {
        let (machine, actions) = try Self.after(.farmRefused, from: .active, inFarm: true)
        #expect(machine == JobMachine(state: .failed))
        #expect(actions.isEmpty)
    }

    /// Paused while it planned for the farm, then its plan failed (or the farm refused it).
    @Test func pausedRefusedByTheFarmBecomesFailed() throws {
        let (machine, actions) = try Self.after(.farmRefused, from: .paused, inFarm: true)
        #expect(machine == JobMachine(state: .failed))
        #expect(actions.isEmpty)
        #expect(throws: RefusedTransition.self) { try Self.after(.farmRefused, from: .paused, inFarm: false) }
    }

    @Test func failedRetriedBecomesQueuedRetryingFailedOutputs() throws {
        let (machine, actions) = try Self.after(.retryRequested, from: .failed)
        #expect(machine == JobMachine(state: .queued, retryFailed: true))
        #expect(actions.isEmpty)
    }

    @Test func cancelledRetriedBecomesQueued() throws {
        let (machine, _) = try Self.after(.retryRequested, from: .cancelled)
        #expect(machine == JobMachine(state: .queued, retryFailed: true))
    }

    @Test func activeRestartedBecomesQueuedOutsideTheFarm() throws {
        let (machine, actions) = try Self.after(.serverRestarted, from: .active, inFarm: true)
        #expect(machine == JobMachine(state: .queued))
        #expect(actions.isEmpty)
    }

    @Test func pausedInTheFarmRestartedStaysPausedOutsideTheFarm() throws {
        let (machine, _) = try Self.after(.serverRestarted, from: .paused, inFarm: true)
        #expect(machine == JobMachine(state: .paused))
    }

    @Test func cancellingRestartedBecomesCancelled() throws {
        let (machine, _) = try Self.after(.serverRestarted, from: .cancelling, inFarm: true)
        #expect(machine == JobMachine(state: .cancelled))
    }

    @Test(arguments: [JobState.queued, .completed, .failed, .cancelled])
    func restartedLeavesQueuedAndFinishedJobsAlone(state: JobState) throws {
        let (machine, actions) = try Self.after(.serverRestarted, from: state)
        #expect(machine == JobMachine(state: state))
        #expect(actions.isEmpty)
    }

    @Test(arguments: [JobEvent.pauseRequested, .resumeRequested, .cancelRequested, .dispatched, .retryRequested])
    func completedRefusesEveryRequestAndStaysCompleted(event: JobEvent) {
        var machine = JobMachine(state: .completed)
        #expect(throws: RefusedTransition(state: .completed, event: event)) { try machine.handle(event) }
        #expect(machine == JobMachine(state: .completed))
    }

    @Test func refusalsSayWhatCannotBeDone() {
        #expect(RefusedTransition(state: .completed, event: .pauseRequested).description
            == "cannot pause a job that is completed")
        #expect(RefusedTransition(state: .queued, event: .retryRequested).description
            == "cannot retry a job that is queued")
    }

    @Test func queuedRefusesRetryAndResume() {
        for event in [JobEvent.retryRequested, .resumeRequested, .farmFinished(failed: 0, cancelled: false)] {
            var machine = JobMachine(state: .queued)
            #expect(throws: RefusedTransition.self) { try machine.handle(event) }
        }
    }

    @Test func activeRefusesBeingDispatchedAgainOrRetried() {
        for event in [JobEvent.dispatched, .retryRequested, .resumeRequested] {
            var machine = JobMachine(state: .active, inFarm: true)
            #expect(throws: RefusedTransition.self) { try machine.handle(event) }
        }
    }

    /// Every sequence of events from a new job keeps the machine consistent: the farm has the
    /// job exactly when it is active, cancelling, or paused after it was active; an action goes
    /// to the farm only for a job the farm has (or is given).
    @Test func everySequenceOfEventsKeepsTheFarmAndTheStateConsistent() {
        let events: [JobEvent] = [
            .dispatched, .pauseRequested, .resumeRequested, .cancelRequested, .retryRequested,
            .farmFinished(failed: 0, cancelled: false), .farmFinished(failed: 1, cancelled: false),
            .farmFinished(failed: 0, cancelled: true), .farmRefused, .serverRestarted,
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var machine = JobMachine()
            for _ in 0..<12 {
                let event = events.randomElement(using: &generator)!
                let before = machine
                do {
                    let actions = try machine.handle(event)
                    for action in actions where action != .submitToFarm { #expect(before.inFarm) }
                    if actions.contains(.submitToFarm) { #expect(!before.inFarm && machine.inFarm) }
                } catch {
                    #expect(machine == before)
                }
                switch machine.state {
                case .active, .cancelling: #expect(machine.inFarm)
                case .queued, .cancelled, .completed, .failed: #expect(!machine.inFarm)
                case .paused: break
                }
                if machine.state.isFinished { #expect(!machine.retryFailed) }
            }
        }
    }
}

/// The scheduler: strict priority, then submission order; the farm kept fed.
@Suite struct SchedulerTests {
    static func queued(_ id: Int64, _ priority: Int) -> Scheduler.Entry {
        Scheduler.Entry(id: id, priority: priority, machine: JobMachine())
    }

    static func active(_ id: Int64, _ priority: Int) -> Scheduler.Entry {
        Scheduler.Entry(id: id, priority: priority, machine: JobMachine(state: .active, inFarm: true))
    }

    @Test func strictPriorityThenSubmissionOrder() {
        let jobs = [Self.queued(1, 50), Self.queued(2, 90), Self.queued(3, 50), Self.queued(4, 90), Self.queued(5, 10)]
        #expect(Scheduler.inOrder(jobs).map(\.id) == [2, 4, 1, 3, 5])
        #expect(Scheduler(depth: 3).toDispatch(jobs) == [2, 4, 1])
    }

    @Test func theFarmIsKeptFedToItsDepthOnly() {
        let jobs = [Self.active(1, 50), Self.queued(2, 50), Self.queued(3, 50)]
        #expect(Scheduler(depth: 2).toDispatch(jobs) == [2])
        #expect(Scheduler(depth: 1).toDispatch(jobs).isEmpty)
    }

    @Test func aHigherPriorityJobGoesToTheFarmPastItsDepth() {
        let jobs = [Self.active(1, 50), Self.active(2, 50), Self.queued(3, 50), Self.queued(4, 80)]
        #expect(Scheduler(depth: 2).toDispatch(jobs) == [4])
    }

    @Test func pausedAndFinishedJobsAreNotDispatched() {
        let jobs = [
            Scheduler.Entry(id: 1, priority: 90, machine: JobMachine(state: .paused)),
            Scheduler.Entry(id: 2, priority: 90, machine: JobMachine(state: .failed)),
            Self.queued(3, 10),
        ]
        #expect(Scheduler(depth: 2).toDispatch(jobs) == [3])
    }

    /// A paused job starts nothing: the next job goes to the farm (two paused jobs left the
    /// workers idle with a third queued).
    @Test func aJobPausedInTheFarmDoesNotCountAgainstTheDepth() {
        let paused = { (id: Int64) in Scheduler.Entry(id: id, priority: 50, machine: JobMachine(state: .paused, inFarm: true)) }
        #expect(Scheduler(depth: 1).toDispatch([paused(1), Self.queued(2, 50)]) == [2])
        #expect(Scheduler(depth: 2).toDispatch([paused(1), paused(2), Self.queued(3, 50), Self.queued(4, 50)]) == [3, 4])
    }

    /// The same job submitted twice would take one lock twice (the second refused as `locked`
    /// by the server itself): it waits for the first, and a job after it goes on.
    @Test func aJobWhoseManifestTheFarmHasWaitsForIt() {
        func job(_ id: Int64, _ key: String, _ machine: JobMachine = JobMachine()) -> Scheduler.Entry {
            Scheduler.Entry(id: id, priority: 50, machine: machine, key: key)
        }
        let inFarm = JobMachine(state: .active, inFarm: true)
        #expect(Scheduler(depth: 2).toDispatch([job(1, "a"), job(2, "a"), job(3, "b")]) == [1, 3])
        #expect(Scheduler(depth: 3).toDispatch([job(1, "a", inFarm), job(2, "a"), job(3, "b")]) == [3])
        #expect(Scheduler(depth: 3).toDispatch([job(1, "a", JobMachine(state: .paused, inFarm: true)), job(2, "a")]).isEmpty)
        #expect(Scheduler(depth: 2).toDispatch([Self.queued(1, 50), Self.queued(2, 50)]) == [1, 2])
    }
}
