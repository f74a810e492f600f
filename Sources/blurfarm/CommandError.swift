import ArgumentParser
import BlurfarmCluster
import BlurfarmCoordinator

/// An error shown to the user: one line, already in words, with the exit status to use.
struct CommandError: Error, CustomStringConvertible {
    let message: String
    let exitCode: Int32

    init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }

    var description: String { message }
}

/// How a command ends on an error: the message on standard error and the exit status. The one
/// place where the library modules' typed errors meet the exit statuses of docs/commands.md
/// (as swift-argument-parser's `MessageInfo` decides for its own errors).
struct CommandFailure {
    /// One line, naming the file or tool first.
    let message: String
    /// ``ExitStatus``.
    let exitCode: Int32

    init(_ error: any Error) {
        switch error {
        case let error as CommandError: (message, exitCode) = (error.message, error.exitCode)
        case let error as ClusterError: (message, exitCode) = (error.description, Self.exitCode(of: error))
        default: (message, exitCode) = ("\(error)", ExitStatus.someFailed)
        }
    }

    /// A cluster failure's exit status: 2 when what the command was given cannot be read (the
    /// shard, the split, the run folder), 1 when Slurm or the state folder refused.
    private static func exitCode(of error: ClusterError) -> Int32 {
        switch error {
        case .shardNumberTooLarge, .shardVariableNotANumber, .shardIndexNotInEnvironment, .shardCountNotInEnvironment,
            .partialArray, .noShards, .noSuchShard, .unreadableSplit, .splitMismatch, .notARunFolder, .unreadableRun:
            ExitStatus.invalid
        case .cannotWrite, .cannotWriteReport, .state, .toolCannotStart, .toolMissing, .toolFailed, .notAJobID,
            .finisherRefused, .stillRunning:
            ExitStatus.someFailed
        }
    }
}

extension ExitCode {
    /// Says `error` on standard error (``CommandFailure``); the exit status it ends the command with.
    static func reporting(_ error: any Error) -> ExitCode {
        let failure = CommandFailure(error)
        printError(failure.message)
        return ExitCode(failure.exitCode)
    }
}
