import BlurfarmCoordinator
import BlurfarmState
import BlurfarmCore
import BlurfarmEngine
import BlurfarmImageIO
import BlurfarmPlugins
import Foundation
import Synchronization

extension Farm {
    /// The whole of one job, on its own thread: its lock, the up-to-date split, rendering,
    /// records, prune, the report in the state folder; every step told as events.
    func run(_ id: FarmJobID, _ job: FarmJob, control: JobControl) -> JobOutcome {
        let plan = job.plan
        let configuration = settings.configuration
        let began = Date()
        let failures = Mutex(0)
        let problem: @Sendable (JobProblem) -> Void = { [self] problem in
            publish(.problem(id, problem))
            if !problem.isWarning { failures.withLock { $0 += 1 } }
        }
        let runSettings = RunSettings(
            configuration: settings.configurationPath, workers: settings.workers, threads: settings.threads,
            decodedImages: configuration.decodedImages, tile: plan.tileSize, pixelLimit: configuration.pixelLimit,
            verify: (job.verify ?? plan.job.verify).rawValue)
        func ended(_ outputs: [OutputReport] = []) -> JobOutcome {
            let report = RunReport(
                job: plan.job.name, manifest: plan.manifestPath, started: began, finished: Date(), settings: runSettings,
                outputs: outputs)
            return JobOutcome(
                report: report, failures: failures.withLock { $0 } + report.failed, inputs: plan.inputs.count,
                pruneAsked: job.prune)
        }
        /// The farm's rendering; nil when the workers could not start (a problem, unless the job
        /// was stopped meanwhile).
        func startRendering() -> (any ImageRendering)? {
            do throws(RenderFailure) {
                return try self.rendering()
            } catch {
                if control.ended == nil { problem(.workersUnavailable(error)) }
                return nil
            }
        }
        /// What the plan left out, and the globs that matched nothing: told before anything runs.
        func tellPlanProblems() {
            for line in plan.refused { problem(.inputRefused(manifest: plan.manifestPath, line)) }
            for line in plan.passedThrough { problem(.passedThrough(manifest: plan.manifestPath, line)) }
            let unmatched = Diagnostics(plan.unmatchedGlobs)
            if !unmatched.isEmpty { problem(.unmatchedGlobs(unmatched)) }
        }
        // The detectors the regions name, before anything runs: without one, nothing does.
        let detectors: [String: RegionDetector]
        do throws(PluginError) {
            detectors = try self.detectors(for: plan)
        } catch {
            tellPlanProblems()
            problem(.detectorUnavailable(error))
            return ended()
        }
        /// `work` with its detecting outputs given their regions (``DetectedRegions``), and
        /// those whose input's boxes could not be had, failed; `willRead` hears of each input
        /// before it is searched.
        func detected(_ work: JobPlan, willRead: @Sendable (PlannedInput) -> Void = { _ in }) -> DetectedRegions.Outcome {
            // In the workers, started now (the rendering after needs them too). Without
            // workers that can start, the photos are not searched (nor written).
            let searching = !detectors.isEmpty && work.inputs.contains { $0.outputs.contains { $0.variant.detection != nil } }
            var rendering: (any ImageRendering)?
            if searching, settings.workers > 0 {
                do throws(RenderFailure) {
                    rendering = try self.rendering()
                } catch {
                    let outcome = DetectedRegions.unsearched(
                        work, because: control.ended ?? .regions("no worker could start to search the photos, so nothing of them is written: \(error)"))
                    for report in outcome.failed { publish(.outputFinished(id, report)) }
                    return outcome
                }
            }
            let outcome = DetectedRegions.resolve(
                work, detectors: detectors, rendering: rendering,
                parallelism: settings.workers > 0 ? settings.workers : settings.threads,
                pixelLimit: configuration.pixelLimit,
                memoryLimit: configuration.memoryLimit ?? ImageReader.usableMemory, confinement: job.confinement,
                control: control, cacheProblem: { problem(.state($0)) }, willRead: willRead)
            // Told as any output's end is: each failed output is said, with why.
            for report in outcome.failed { publish(.outputFinished(id, report)) }
            return outcome
        }
        // A job without records (`apply`): no lock, no up-to-date split, no report in the state folder.
        guard job.keepsRecords else {
            tellPlanProblems()
            publish(.jobAccepted(id, job: plan.job.name, outputs: plan.outputCount, upToDate: 0, inputs: plan.inputs.count))
            guard plan.outputCount > 0 else { return ended() }
            let detection = detected(plan)
            var rendered: [OutputReport] = []
            if detection.plan.outputCount > 0 {
                guard let rendering = startRendering() else { return ended() }
                rendered = render(
                    id, detection.plan, of: job, on: rendering, control: control, willRead: { _ in }, written: { _ in })
            }
            // Timed from the job's start: detecting is part of it.
            let ran = ended(rendered + detection.failed).report
            // Told once per input, as a recorded job tells them (never remembered here).
            for (_, failed, error) in FailedInput.gather(ran.outputs) {
                publish(.problem(id, .inputFailed(FailedInput(error: error, variants: failed.map(\.variant), remembered: false))))
            }
            return JobOutcome(
                report: ran, failures: failures.withLock { $0 } + ran.failed, inputs: plan.inputs.count, pruneAsked: false)
        }
        let folder = JobStateFolder(state: settings.stateFolder, jobName: plan.job.name, manifestPath: plan.manifestPath)
        // Taken as `run` takes every job's before it starts (``JobLocks``), unless the job
        // comes with it.
        var lock = job.lock
        if lock == nil {
            do throws(JobLocks.Failure) {
                lock = try JobLocks.acquire(
                    [(plan.job.name, plan.manifestPath)], state: settings.stateFolder, shard: job.shard, wait: job.waitForLock
                ).first
            } catch {
                switch error {
                case .busy(let busy): problem(busy)
                case .cannotLock(let error): problem(.state(error))
                }
                return ended()
            }
        }
        defer { withExtendedLifetime(lock) {} }
        tellPlanProblems()
        let incremental: IncrementalRun
        do throws(StateError) {
            let records = try ShardRecords.records(folder, shard: job.shard, plan: plan)
            // The sizes planning and the split read, kept under the lock: a shard's in its own
            // records, which the job's merge lays over the job's. A cache: records that cannot be
            // written cost the next plan the headers.
            try? plan.inputSizes?.save(into: records, forgetting: job.shard == nil)
            incremental = IncrementalRun(
                plan: plan, records: records, versions: settings.recipeVersions,
                plugins: job.registry.pluginHashes(of: [plan]).merging(detectors.recipeIdentities) { $1 }, pixelLimit: configuration.pixelLimit,
                force: job.force, retryFailed: job.retryFailed, orphansAsked: job.prune || job.mapPath != nil,
                stopped: { control.ended != nil })
        } catch {
            problem(.state(error))
            return ended()
        }
        let work = incremental.plan
        publish(.jobAccepted(
            id, job: plan.job.name, outputs: work.outputCount, upToDate: plan.outputCount - work.outputCount,
            inputs: plan.inputs.count))
        // Made, recorded and reported a batch of inputs at a time, in plan order: the run holds
        // a batch's reports, the report's details go to the state folder as each batch ends.
        let reported = ReportedOutputs.Spilling(state: settings.stateFolder)
        // What the map and the unredacted list need of the outputs: those written or up to date,
        // by their places in the plan for the map, by their paths' bytes among those published
        // unredacted (twin names are two files).
        let unredacted = Set(plan.unredacted.map(RealPath.Identity.Bytes.init))
        var published = PublishedOutputs()
        var publishedUnredacted: Set<RealPath.Identity.Bytes> = []
        var detectionFailed: [String] = []
        var rendering: (any ImageRendering)?
        if work.outputCount > 0 { JobRunner.removeAbandonedFiles(of: work, minimumAge: job.abandonedAge) }
        var finished = Date()
        for batch in incremental.batches(of: IncrementalRun.reportBatch) {
            var ran: [OutputReport] = []
            if let ended = control.ended, batch.work.outputCount > 0 {
                // The job ended before this batch began: its outputs are counted, not started.
                let status: OutputReport.Status = ended == .cancelled ? .cancelled : .stopped
                reported.addNotStarted(batch.work.outputCount, status)
                publish(.outputsNotStarted(id, status, count: batch.work.outputCount))
            } else if batch.work.outputCount > 0 {
                // Each input is fingerprinted as it is first read, searched or decoded: its outputs
                // are recorded with the bytes as they were before any of this run's reads.
                let detection = detected(batch.work, willRead: incremental.willRead)
                if detection.plan.outputCount > 0 {
                    guard let started = rendering ?? startRendering() else { return ended() }
                    rendering = started
                    ran = render(
                        id, detection.plan, of: job, on: started, around: batch.around,
                        control: control, willRead: incremental.willRead
                    ) { report in
                        // Only outputs written and verified are recorded.
                        do throws(StateError) {
                            try incremental.recordWritten(report)
                        } catch {
                            problem(.notRecorded(output: report.output, error))
                        }
                    }
                }
                ran += detection.failed
                detectionFailed += detection.failed.filter { $0.status == .failed }.map(\.output)
                let (failedInputs, recordingProblem) = incremental.recordFailures(of: ran)
                // Their outputs are counted failed in the report: told once per input.
                for input in failedInputs { publish(.problem(id, .inputFailed(input))) }
                if let recordingProblem { problem(.state(recordingProblem)) }
            }
            let outputs = batch.merged(ran)
            if job.mapPath != nil { batch.publish(ran, into: &published) }
            if !unredacted.isEmpty {
                for output in outputs where output.status == .written || output.status == .skipped {
                    let path = RealPath.Identity.Bytes(output.output)
                    if unredacted.contains(path) { publishedUnredacted.insert(path) }
                }
            }
            reported.add(outputs)
            finished = Date()
            publish(.batchFinished(id))
        }
        var pruned: [String] = []
        // Outputs made with regions this run could not have (their input failed, said above):
        // not left published as current, as a pruned output is not.
        for output in plan.regionFailed.flatMap(\.outputs) + detectionFailed where control.ended == nil {
            do throws(StateError) {
                guard let withdrawn = try incremental.withdraw(output) else { continue }
                switch withdrawn.action {
                case .removed:
                    pruned.append(withdrawn.output)
                    publish(.pruned(id, path: withdrawn.output, folder: false))
                    problem(.withdrawn(withdrawn.output))
                case .alreadyGone: break
                case .keptChanged: problem(.prunedFileChanged(withdrawn.output))
                }
            } catch {
                problem(.state(error))
            }
        }
        do throws(StateError) {
            // Inputs the globs could not see (an unreadable folder) are not gone: nothing is pruned.
            if job.prune, control.ended == nil, plan.refused.isEmpty {
                let orphans = incremental.orphans()
                if !job.forcePrune, let refusal = incremental.pruneRefusal(orphans) {
                    problem(.pruneRefused(job: plan.job.name, refusal))
                } else {
                    let result = try incremental.prune(orphans)
                    for item in result.outputs {
                        switch item.action {
                        case .removed:
                            pruned.append(item.output)
                            publish(.pruned(id, path: item.output, folder: false))
                        case .alreadyGone: break
                        case .keptChanged: problem(.prunedFileChanged(item.output))
                        }
                    }
                    for folder in result.folders { publish(.pruned(id, path: folder, folder: true)) }
                }
            }
        } catch {
            problem(.state(error))
        }
        var report = RunReport(
            job: plan.job.name, manifest: plan.manifestPath, started: began, finished: finished, settings: runSettings,
            reported: reported.finish())
        report.pruned = pruned
        report.notEnlargedList = incremental.notEnlarged
        report.unredacted = plan.unredacted.filter { publishedUnredacted.contains(.init($0)) }
        if let map = job.mapPath, control.ended == nil {
            if !job.forcePrune, let reason = incremental.mapRefusal() {
                problem(.mapKept(path: map, reason))
            } else {
                writeMap(map, of: job, published: published, changedOutputs: report.didWork, incremental, control: control, problem)
            }
        }
        // A job that did nothing leaves no report in the state folder (cron would fill it).
        if report.didWork {
            do {
                _ = try report.writeInStateFolder(settings.stateFolder, keeping: configuration.reportsKept)
            } catch {
                problem(.reportNotWritten("\(error)"))
            }
        }
        return JobOutcome(
            report: report, failures: failures.withLock { $0 } + report.failed, inputs: plan.inputs.count,
            pruneAsked: job.prune)
    }

    /// Renders every output of `work` on `rendering`, telling each step as events, each input
    /// to `willRead` before it is read and each finished output to `written`. `work` is the
    /// job's, or a batch of it with `around` of its inputs before and after
    /// (``IncrementalRun/Batch``), whose job's abandoned files were removed before the first.
    /// Returns every output's report in plan order, those not started too.
    private func render(
        _ id: FarmJobID, _ work: JobPlan, of job: FarmJob, on rendering: any ImageRendering,
        around: (before: Int, after: Int)? = nil, control: JobControl,
        willRead: @escaping @Sendable (PlannedInput) -> Void, written: @escaping @Sendable (OutputReport) -> Void
    ) -> [OutputReport] {
        let configuration = settings.configuration
        let runner = JobRunner(
            registry: job.registry, rendering: rendering, pixelLimit: configuration.pixelLimit,
            decodedImages: configuration.decodedImages,
            memoryLimit: configuration.memoryLimit ?? ImageReader.usableMemory,
            wholeImagePixels: configuration.wholeImagePixels, confinement: job.confinement)
        return runner.run(
            work, verify: job.verify, control: control, around: around ?? (0, 0),
            removingAbandoned: around == nil
        ) { [self] event in
            switch event {
            case .inputRead(let input): willRead(input)
            case .outputStarted(let output, let tiles): publish(.outputStarted(id, output: output.path, tiles: tiles))
            case .tilesDone(let output, let done, let total):
                publish(.tilesDone(id, output: output.path, done: done, total: total))
            case .outputFinished(let report):
                publish(.outputFinished(id, report))
                written(report)
                // A full or read-only disk fails every write there after it alike: the job
                // writes no more there, its outputs there not written are left for the next
                // run, and that is said once a file system (the output's failure is counted).
                if case .write(let error)? = report.failure, error.refusesEveryWriteThere, control.stopWriting(at: report.output) {
                    publish(.problem(id, .writingStopped(job: work.job.name, error)))
                }
            }
        }
    }
}
