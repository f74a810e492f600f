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
public func eventually(
    _ what: @autoclosure () -> String,
    timeout: Duration = eventuallyTimeout,
    interval: Duration = .milliseconds(10),
    sourceLocation: Testing.SourceLocation = #_sourceLocation,
    _ condition: () throws -> Bool
) throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        if ContinuousClock.now >= deadline {
            let happenedInTime = try condition()  // one last look, after the deadline
            try #require(happenedInTime, "waited \(timeout) for \(what())", sourceLocation: sourceLocation)
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
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        if ContinuousClock.now >= deadline {
            let happenedInTime = try await condition()
            try #require(happenedInTime, "waited \(timeout) for \(what())", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: interval)
    }
}
