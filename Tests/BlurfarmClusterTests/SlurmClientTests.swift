import BlurfarmCluster
import Testing

/// What `blurfarm slurm` reads from Slurm and gives it: `scontrol show job --oneliner` lines
/// (array tasks one by one, or pending ones grouped), array ranges, shell quoting.
@Suite struct SlurmClientTests {
    @Test func arrayTasksPendingInARangeRunningAndEndedAreEachKnown() {
        let text = """
            JobId=7 ArrayJobId=7 ArrayTaskId=4-6%2 ArrayTaskThrottle=2 JobName=blurfarm-photos UserId=root(0) JobState=PENDING Reason=JobArrayTaskLimit Dependency=(null) ExitCode=0:0
            JobId=9 ArrayJobId=7 ArrayTaskId=1 JobName=blurfarm-photos JobState=RUNNING Reason=None ExitCode=0:0
            JobId=8 ArrayJobId=7 ArrayTaskId=0 JobName=blurfarm-photos JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0
            JobId=10 ArrayJobId=7 ArrayTaskId=3 JobName=blurfarm-photos JobState=CANCELLED Reason=None ExitCode=0:15
            JobId=11 ArrayJobId=7 ArrayTaskId=2 JobName=blurfarm-photos JobState=COMPLETED Reason=None ExitCode=0:0

            """
        let states = SlurmClient.parse(text)
        #expect(states.keys.sorted() == [0, 1, 2, 3, 4, 5, 6])
        #expect(states[5]?.shown == "PENDING (JobArrayTaskLimit)" && states[5]?.hasEnded == false)
        #expect(states[1]?.shown == "RUNNING" && states[1]?.hasEnded == false)
        #expect(states[0]?.shown == "FAILED (exit 1)" && states[0]?.hasEnded == true)
        #expect(states[3]?.shown == "CANCELLED" && states[3]?.hasEnded == true)
        #expect(states[2]?.shown == "COMPLETED")
        // A job that is no array (the finisher) is index -1.
        let finisher = SlurmClient.parse("JobId=12 JobName=blurfarm-photos-finish JobState=PENDING Reason=Dependency ExitCode=0:0\n")
        #expect(finisher[-1]?.shown == "PENDING (Dependency)")
    }

    @Test func arrayRangesReadAndWrittenAsSlurmDoes() {
        #expect(SlurmClient.indexes("3") == [3])
        #expect(SlurmClient.indexes("0-3%2") == [0, 1, 2, 3])
        #expect(SlurmClient.indexes("1,4-5") == [1, 4, 5])
        #expect(SlurmClient.indexes("0-9:4") == [0, 4, 8])
        #expect(SlurmRun.arrayRange([0, 1, 2, 3]) == "0-3")
        #expect(SlurmRun.arrayRange([1, 4, 5, 7]) == "1,4-5,7")
        #expect(SlurmRun.arrayRange([2]) == "2")
    }

    @Test func aPathIsQuotedForTheShellWhateverItHolds() {
        #expect(SlurmClient.quoted("/srv/farm/it's here/$HOME `x`") == #"'/srv/farm/it'\''s here/$HOME `x`'"#)
    }
}
