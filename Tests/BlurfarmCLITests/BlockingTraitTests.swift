import BlurfarmTestSupport
import Testing

/// The tests that block their thread run on threads of their own, not the cooperative pool's
/// (``BlockingTrait``): every test of a suite with the trait, each case of a parameterised
/// one, and no other test.
@Suite(.blocking) struct BlockingTraitTests {
    @Test func aTestOfTheSuiteRunsOnAThreadOfItsOwn() {
        #expect(BlockingTests.isCurrentThreadOne)
    }

    @Test(arguments: 0..<3) func soDoesEachCase(_ index: Int) {
        #expect(BlockingTests.isCurrentThreadOne, "case \(index)")
    }

    /// What it awaits comes back to its thread.
    @Test func itComesBackToItsThreadAfterAwaiting() async {
        await Task.yield()
        let detached = await Task.detached { BlockingTests.isCurrentThreadOne }.value
        #expect(!detached, "a detached task has no preference")
        #expect(BlockingTests.isCurrentThreadOne)
    }
}

@Suite struct UnblockingTraitTests {
    @Test func aTestOfAnotherSuiteRunsOnThePool() {
        #expect(!BlockingTests.isCurrentThreadOne)
    }
}
