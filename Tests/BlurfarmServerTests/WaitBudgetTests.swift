import BlurfarmTestSupport
import Testing

/// How `eventually` counts its time: gaps between looks count up to ``WaitBudget/longestGap``.
@Suite struct WaitBudgetTests {
    @Test func looksAtTheirIntervalSpendTheTimeoutAndNoMore() {
        let start = ContinuousClock.now
        var budget = WaitBudget(.seconds(1), now: start)
        var spent: [Bool] = []
        for look in 1...100 { spent.append(budget.isSpent(now: start + .milliseconds(10 * look))) }
        #expect(spent == Array(repeating: false, count: 99) + [true])
    }

    @Test func aLookThatCameLateCountsForTheLongestGapOnly() {
        let start = ContinuousClock.now
        var budget = WaitBudget(.seconds(5), now: start)
        // Held for ten minutes, then looked at twice: four seconds counted, then five.
        let spent = [600, 602, 603].map { budget.isSpent(now: start + .seconds($0)) }
        #expect(spent == [false, false, true])
    }
}
