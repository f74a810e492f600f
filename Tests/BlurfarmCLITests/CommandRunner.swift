import Foundation

/// Runs the built `blurfarm` executable, as a user would.
struct CommandResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

enum Blurfarm {
    /// The executable beside the test bundle (SwiftPM builds both into the same folder).
    static var executable: URL {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = bundle.deletingLastPathComponent()
        // The test binary may sit inside a .xctest bundle.
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("blurfarm").path),
            folder.path != "/"
        {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("blurfarm")
    }

    static func run(_ arguments: [String], in directory: URL? = nil) throws -> CommandResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
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
    static let corpus = repository.deletingLastPathComponent().appendingPathComponent("shared/corpus")

    static func corpus(_ path: String) -> String { corpus.appendingPathComponent(path).path }

    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("blurfarm-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
