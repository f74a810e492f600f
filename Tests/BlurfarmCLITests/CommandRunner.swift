import BlurfarmTestSupport
import Foundation

/// Runs the built `blurfarm` executable, as a user would.
struct CommandResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

enum Blurfarm {
    /// The built executable.
    static var executable: URL { BuiltExecutable.url }

    /// The environment of every process the tests start: this one's, with the user's state
    /// folder (a configuration without `state:`) in a temporary folder, never the real home.
    static let environment: [String: String] = {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-test-xdg-state-\(getpid())")
        try? FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        return ProcessInfo.processInfo.environment.merging(["XDG_STATE_HOME": state.path]) { $1 }
    }()

    /// The environment of a run that may name the test-only `fault` filter.
    static let faultInjection = ["BLURFARM_FAULT_INJECTION": "1"]

    static func run(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]
    ) throws -> CommandResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        process.environment = Self.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// Paths of the shared test corpus and a fresh temporary folder.
enum Fixtures {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static func corpus(_ path: String) -> String { Corpus.path(path) }

    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("blurfarm-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
