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
    /// folder (a configuration without `state:`) in a temporary folder, never the real home,
    /// removed when the tests' process ends.
    static let environment: [String: String] = {
        try? FileManager.default.createDirectory(atPath: userStateFolder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: Blurfarm.userStateFolder) }
        return ProcessInfo.processInfo.environment.merging(["XDG_STATE_HOME": userStateFolder]) { $1 }
    }()

    /// The tests' `XDG_STATE_HOME`, one for each process of tests.
    static var userStateFolder: String {
        FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-test-xdg-state-\(getpid())").path
    }

    /// Runs the executable with `arguments`; with `limits` (shell `ulimit` options, e.g.
    /// `["-n 24"]`), through `/bin/sh`, which sets those limits and then becomes blurfarm; with
    /// `launcher`, through that Python script, which gets the executable and the arguments in
    /// `sys.argv[1:]` and must exec them; with `shell`, `/bin/sh` with `arguments` (for
    /// redirections: the test passes the executable as `$0`).
    static func run(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:], limits: [String] = [],
        launcher: String? = nil, shell: Bool = false
    ) throws -> CommandResult {
        let process = Process()
        if shell {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = arguments
        } else if let launcher {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", launcher, executable.path] + arguments
        } else if limits.isEmpty {
            process.executableURL = executable
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            let script = limits.map { "ulimit \($0) && " }.joined() + "exec \"$0\" \"$@\""
            process.arguments = ["-c", script, executable.path] + arguments
        }
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

extension Blurfarm {
    /// Runs the shell `command` on a pseudo-terminal (script(1)), as a user at a terminal:
    /// its exit status and everything it drew.
    static func onTerminal(_ command: String) throws -> (status: Int32, screen: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let screen = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, screen)
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

extension Fixtures {
    /// Writes, in `folder`, `farm.conf` (`state: state` and `configuration`, more lines) and
    /// `job.job`: job `name`, every file of `photos/` blurred (gaussian 1.5) to
    /// `out/{stem}-blur.png`. Returns the manifest's and the configuration's paths.
    static func writeBlurJob(
        named name: String, in folder: URL, configuration: String = ""
    ) throws -> (manifest: String, config: String) {
        let config = folder.appendingPathComponent("farm.conf").path
        try ("state: state\n" + configuration).write(toFile: config, atomically: true, encoding: .utf8)
        let manifest = folder.appendingPathComponent("job.job").path
        try """
            job: \(name)
            inputs: [photos/*]
            outputs:
              - name: blur
                path: out/{stem}-blur.png
                filters:
                  - gaussian:
                      sigma: 1.5

            """.write(toFile: manifest, atomically: true, encoding: .utf8)
        return (manifest, config)
    }
}
