import BlurfarmSystem
import Testing

@testable import BlurfarmCoordinator

/// How a job is steered (``JobControl``): why it must write nothing more.
struct JobControlTests {
    /// A job whose writing stopped (a full disk) ends as a stopped run does, alone: its
    /// outputs not written are `stopped`; a cancel still says `cancelled`; the stop is told
    /// once, to the first who asks it.
    @Test func aJobThatStopsWritingEndsAsStoppedAloneAndIsToldSoOnce() {
        let stop = StopRequest()
        let (job, other) = (JobControl(job: 1, stop: stop), JobControl(job: 2, stop: stop))
        #expect(job.ended == nil)
        #expect(job.stopWriting())
        #expect(!job.stopWriting())
        #expect(job.ended == .stopped)
        #expect(other.ended == nil)
        job.cancel()
        #expect(job.ended == .cancelled)
        stop.request(15)
        #expect(other.ended == .stopped)
    }
}
