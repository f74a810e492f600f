import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmBench
import BlurfarmClient
import BlurfarmCluster
import BlurfarmCore
import BlurfarmFarm
import BlurfarmImageIO
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

    /// `body`'s value; its ``OptionError`` as a ``CommandError`` with the exit status of an
    /// invalid input (2: nothing ran).
    static func invalid<Value>(_ body: () throws(OptionError) -> Value) throws(CommandError) -> Value {
        do { return try body() } catch { throw CommandError(error.message, exitCode: ExitStatus.invalid) }
    }
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
        case let error as ClusterError:
            let invalid = error.isInvalidRequest
            self = .message(error.description, exitCode: invalid ? ExitStatus.invalid : ExitStatus.someFailed)
        case ClientError.invalidManifest(let diagnostics): self = .diagnostics(diagnostics, exitCode: ExitStatus.invalid)
        // A manifest or configuration that does not read: every problem at its line:column.
        case let diagnostics as Diagnostics:
            self = .diagnostics(DiagnosticPrinter.render(diagnostics, program: "blurfarm"), exitCode: ExitStatus.invalid)
        case let error as ImageIOError: self = .message(error.description, exitCode: ExitStatus.someFailed)
        // Plugins asked to run in process: the options contradict each other.
        case let error as WorkerChoice.Failure:
            self = .message(error.description, exitCode: error.isContradiction ? ExitStatus.invalid : ExitStatus.someFailed)
        case let error as BenchError: self = .message(error.message, exitCode: ExitStatus.someFailed)
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
}

/// A command whose failures all end through ``CommandFailure``: its ``execute()`` throws
/// typed errors (``CommandError``, ImageIO's, the cluster's, a manifest's diagnostics) and
/// `run()` says each and exits with its status (``ExitCode/ending(_:)``).
protocol FarmCommand: ParsableCommand {
    func execute() throws
}

extension FarmCommand {
    func run() throws {
        do { try execute() } catch { throw ExitCode.ending(error) }
    }
}

/// A ``FarmCommand`` that awaits (the client commands, `serve`): its failures end the same way.
protocol AsyncFarmCommand: AsyncParsableCommand {
    func execute() async throws
}

extension AsyncFarmCommand {
    func run() async throws {
        do { try await execute() } catch { throw ExitCode.ending(error) }
    }
}

extension ExitCode {
    /// How a command ends on `error`: what ArgumentParser handles itself (an `ExitCode` already
    /// decided, a `ValidationError`, a clean exit) passes through; anything else is said on
    /// standard error (``CommandFailure``) and ends with its exit status.
    static func ending(_ error: any Error) -> any Error {
        switch error {
        case is ExitCode, is ValidationError, is CleanExit: return error
        default:
            let failure = CommandFailure(error)
            failure.say()
            return ExitCode(failure.exitCode)
        }
    }
}
