// The one way a test waits for something to happen: it looks until it sees it, or fails.
import BlurfarmCore
import Foundation
import Testing

/// How long a test waits for an event by default: far longer than anything takes on a loaded
/// two-core machine, so reaching it is a failure, never a slow machine.
public let eventuallyTimeout: Duration = .seconds(120)

/// Waits until `condition` holds, looking again every `interval`. When `timeout` passes first,
/// fails the test as `#require` does (one issue at `sourceLocation`, saying `what` it waited for
/// and how long, then a thrown error that ends the test). `what` is evaluated only then, so it
/// can show the state last seen. An error `condition` throws ends the wait at once and is
/// rethrown: that is how a caller stops waiting for a process that has already exited.
///
/// The time counted is the time the wait was given to look: a look that comes more than
/// ``WaitBudget/longestGap`` after the one before counts for that much only. A waiter left
/// unscheduled that long (the machine, or the cooperative threads, held by other tests) is
/// not the only one kept waiting: whatever it waits for was held as well. A condition that
/// never holds still fails after `timeout` of looks.
public func eventually(
    _ what: @autoclosure () -> String,
    timeout: Duration = eventuallyTimeout,
    interval: Duration = .milliseconds(10),
    sourceLocation: Testing.SourceLocation = #_sourceLocation,
    _ condition: () throws -> Bool
) throws {
    var budget = WaitBudget(timeout)
    while try !condition() {
        if budget.isSpent() {
            let happenedInTime = try condition()  // one last look, after the deadline
            try #require(happenedInTime, "looked for \(timeout) (each gap over \(WaitBudget.longestGap) counted as that) for \(what())", sourceLocation: sourceLocation)
            return
        }
        Thread.sleep(forTimeInterval: interval.seconds)
    }
}

/// ``eventually(_:timeout:interval:sourceLocation:_:)`` for an asynchronous condition: it
/// sleeps without holding a thread.
public func eventually(
    _ what: @autoclosure () -> String,
    timeout: Duration = eventuallyTimeout,
    interval: Duration = .milliseconds(10),
    sourceLocation: Testing.SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    var budget = WaitBudget(timeout)
    while try await !condition() {
        if budget.isSpent() {
            let happenedInTime = try await condition()
            try #require(happenedInTime, "looked for \(timeout) (each gap over \(WaitBudget.longestGap) counted as that) for \(what())", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: interval)
    }
}

/// The time a wait has had to look, against its timeout: each gap between two looks counts for
/// at most ``longestGap``.
public struct WaitBudget {
    /// The most one gap between looks counts: far above a look and its interval on a loaded
    /// machine, far below the pauses of a machine whose threads are all held for minutes.
    public static let longestGap: Duration = .seconds(2)

    let timeout: Duration
    private var counted: Duration = .zero
    private var last: ContinuousClock.Instant

    public init(_ timeout: Duration, now: ContinuousClock.Instant = .now) {
        self.timeout = timeout
        last = now
    }

    /// Counts the time since the last look (at most ``longestGap``); whether `timeout` is
    /// counted.
    public mutating func isSpent(now: ContinuousClock.Instant = .now) -> Bool {
        counted += min(now - last, Self.longestGap)
        last = now
        return counted >= timeout
    }
}
