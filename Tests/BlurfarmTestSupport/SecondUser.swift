import Foundation

/// A second user for tests that run as root (as CI does) and need someone else: the fixed
/// system user `blurfarm-test`, created with `useradd` the first time and reused after
/// (creating it again is a no-op, so tests running at once agree on it).
public enum SecondUser {
    public static let name = "blurfarm-test"

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The user's id, after creating the user if it does not exist. Needs root.
    public static func ensure() throws -> UInt32 {
        if let uid = try? uid() { return uid }
        let result = try command("/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name])
        // Another test may have created it meanwhile (status 9: the user exists).
        guard result.status == 0 || result.status == 9 else { throw Failure(description: "useradd: \(result.output)") }
        return try uid()
    }

    private static func uid() throws -> UInt32 {
        let result = try command("/usr/bin/id", ["-u", name])
        guard result.status == 0, let uid = UInt32(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Failure(description: "id -u \(name): \(result.output)")
        }
        return uid
    }

    /// A process running `arguments` as the user (`setpriv`, no supplementary groups), not
    /// yet started.
    public static func process(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid", name, "--regid", name, "--clear-groups", "--"] + arguments
        return process
    }

    private static func command(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
