import ArgumentParser
import BlurfarmClient
import BlurfarmCluster
import Foundation

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

/// How a command ends on an error: what it says on standard error and its exit status. The one
/// place where the library modules' typed errors meet the exit statuses of docs/commands.md
/// (as swift-argument-parser's `MessageInfo` decides for its own errors).
enum CommandFailure {
    /// One line, said as `blurfarm: error: …`.
    case message(String, exitCode: Int32)
    /// Diagnostics rendered as `blurfarm check` prints them (a manifest the server refused).
    case diagnostics(String, exitCode: Int32)

    init(_ error: any Error) {
        switch error {
        case let error as CommandError: self = .message(error.message, exitCode: error.exitCode)
        case let error as ClusterError: self = .message(error.description, exitCode: Self.exitCode(of: error))
        case ClientError.invalidManifest(let diagnostics): self = .diagnostics(diagnostics, exitCode: ExitStatus.invalid)
        default: self = .message("\(error)", exitCode: ExitStatus.someFailed)
        }
    }

    /// The exit status.
    var exitCode: Int32 {
        switch self {
        case .message(_, let code), .diagnostics(_, let code): code
        }
    }

    /// Says it on standard error.
    func say() {
        switch self {
        case .message(let message, _): printError(message)
        case .diagnostics(let text, _): FileHandle.standardError.write(Data(text.utf8))
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
        failure.say()
        return ExitCode(failure.exitCode)
    }
}
