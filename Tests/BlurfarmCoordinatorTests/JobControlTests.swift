import BlurfarmSystem
import Foundation
import Testing

@testable import BlurfarmCoordinator

/// How a job is steered (``JobControl``): why it must write nothing more.
struct JobControlTests {
    /// A job that stopped writing to a full disk writes nothing more there, as a stopped run
    /// does (`stopped`), and goes on elsewhere (`/proc` is another file system than the
    /// temporary folder's); an output there is judged by its nearest folder that is there; the
    /// stop is told once a file system, to the first who asks it; another job, a cancel and a
    /// stop of the run are as they were.
    @Test func aJobThatStopsWritingToAFullDiskWritesNothingMoreThereAlone() throws {
        let folder = FileManager.default.temporaryDirectory.path
        let stop = StopRequest()
        let (job, other) = (JobControl(job: 1, stop: stop), JobControl(job: 2, stop: stop))
        #expect(job.ended(writing: folder + "/a.png") == nil)
        #expect(job.stopWriting(at: folder + "/a.png"))
        #expect(!job.stopWriting(at: folder + "/b.png"))
        #expect(job.ended == nil)
        #expect(job.ended(writing: folder + "/c.png") == .stopped)
        #expect(job.ended(writing: folder + "/not/made/yet/d.png") == .stopped)
        #expect(job.ended(writing: "/proc/e.png") == nil)
        #expect(other.ended(writing: folder + "/c.png") == nil)
        job.cancel()
        #expect(job.ended(writing: folder + "/c.png") == .cancelled)
        stop.request(15)
        #expect(other.ended == .stopped)
        #expect(other.ended(writing: "/proc/e.png") == .stopped)
    }
}
