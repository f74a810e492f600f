import BlurfarmAPI
import Foundation
import PropertyBased
import Testing

/// What the server writes, a client reads back as it was (docs/api.md): a job, its outputs,
/// the workers, through the API's own encoder and decoder.
@Suite struct JobViewRoundTripTests {
    static let words = ["web", "photos", "é", "a/b", "\"", "\\", "\n", "\u{1F600}", ""]

    static func word<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        (0..<Int.random(in: 0...3, using: &rng)).map { _ in words.randomElement(using: &rng)! }.joined()
    }

    static func date<R: RandomNumberGenerator>(_ rng: inout R) -> Date {
        Date(timeIntervalSince1970: Double(Int.random(in: 1_000_000_000...4_000_000_000, using: &rng)))
    }

    static let jobs = Generator<QueueJob, Shrink.None<QueueJob>>(run: { rng in
        let total = Int.random(in: 0...500, using: &rng)
        let started = Bool.random(using: &rng) ? date(&rng) : nil
        return QueueJob(
            id: Int64.random(in: 1...Int64.max, using: &rng), name: word(&rng), manifest: "/srv/" + word(&rng),
            source: ManifestSource.allCases.randomElement(using: &rng)!, manifestText: word(&rng),
            priority: Int.random(in: 0...100, using: &rng), state: JobState.allCases.randomElement(using: &rng)!,
            inFarm: Bool.random(using: &rng), retryFailed: Bool.random(using: &rng), submittedAt: date(&rng),
            startedAt: started, finishedAt: started.map { $0.addingTimeInterval(Double(Int.random(in: 0...9999, using: &rng))) },
            outputsTotal: total, outputsUpToDate: Int.random(in: 0...total, using: &rng),
            outputsWritten: Int.random(in: 0...total, using: &rng), outputsFailed: Int.random(in: 0...3, using: &rng),
            outputsCancelled: Int.random(in: 0...3, using: &rng), tilesDone: Int.random(in: 0...1000, using: &rng),
            tilesTotal: Int.random(in: 0...1000, using: &rng), pixelsWritten: Int.random(in: 0...Int(Int32.max), using: &rng),
            error: Bool.random(using: &rng) ? word(&rng) : nil, refusal: JobRefusal.allCases.randomElement(using: &rng))
    })

    @Test func aJobReadBackWritesTheSameBytes() async {
        await propertyCheck(count: 300, input: Self.jobs) { job in
            let view = JobView(job, now: job.submittedAt.addingTimeInterval(100))
            let written = try APIJSON.encoder().encode(view)
            let read = try APIJSON.decoder().decode(JobView.self, from: written)
            #expect(read.job == job)
            #expect(read.progress == view.progress && read.withManifest)
            #expect(try APIJSON.encoder().encode(read) == written)
        }
    }

    /// An event's job (`"manifestText": null`), alone or as a `progress` event's `job`, reads
    /// back as the job with an empty text, not shown.
    @Test func anEventsJobReadsBackWithoutItsManifest() async {
        await propertyCheck(count: 100, input: Self.jobs) { job in
            let view = JobView(job, withManifest: false, now: job.submittedAt.addingTimeInterval(100))
            let written = try APIJSON.encoder().encode(view)
            #expect(String(decoding: written, as: UTF8.self).contains(#""manifestText":null"#))
            let progress = Data(#"{"job":"#.utf8) + written + Data(#","output":"/srv/out/a.png","done":3,"total":12}"#.utf8)
            for data in [written, progress] {
                let read = try #require(JobView(event: data))
                var expected = job
                expected.manifestText = ""
                #expect(read.job == expected && read.progress == view.progress && !read.withManifest)
            }
            // The API's decoder reads an event's job so too.
            let answer = try APIJSON.decoder().decode(JobView.self, from: written)
            #expect(answer.job.manifestText.isEmpty && !answer.withManifest)
        }
        #expect(JobView(event: Data("not json".utf8)) == nil)
        #expect(JobView(event: Data(#"{"id":3}"#.utf8)) == nil)
    }

    @Test func outputsAndWorkersComeBackAsWritten() throws {
        let outputs = OutputList(outputs: JobOutputState.allCases.enumerated().map { index, state in
            QueueOutput(
                jobId: 7, output: "/srv/out/\(index).png", state: state, tilesDone: index, tiles: 4, pixels: 1_000_000,
                seconds: state == .rendering ? nil : 0.25, retries: 0, checksum: state == .written ? "0123456789abcdef" : nil,
                errorKind: state == .failed ? "decode" : nil, error: state == .failed ? "a.png: not an image" : nil,
                startedAt: Date(timeIntervalSince1970: 1_800_000_000), finishedAt: nil)
        })
        let written = try APIJSON.encoder().encode(outputs)
        #expect(try APIJSON.decoder().decode(OutputList.self, from: written).outputs == outputs.outputs)
        #expect(String(decoding: written, as: UTF8.self).contains(#""state":"upToDate""#))
        let workers = WorkerList(workers: [WorkerInfo(slot: 0, pid: 42, state: .busy, tile: "256x256+0+0", tilesDone: 3, restarts: 1)])
        #expect(try APIJSON.decoder().decode(WorkerList.self, from: APIJSON.encoder().encode(workers)).workers == workers.workers)
    }
}
