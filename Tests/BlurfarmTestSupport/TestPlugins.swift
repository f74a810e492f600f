import Foundation

/// Builds test plugins with the system's C compiler against the ABI header, in temporary
/// folders outside the repository, and finds the example plugins `swift build` built.
public enum TestPlugins {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    /// The ABI header, as installed in the repository.
    public static let header = repository.appendingPathComponent("Plugins/include/blurfarm_plugin.h")
    /// The C sources of the test plugins.
    static func source(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("test-plugins/\(name)")
    }

    /// The folder `swift build` put the executable and the example plugins in.
    public static var buildFolder: String { BuiltExecutable.url.deletingLastPathComponent().path }

    /// A new temporary folder, mode 755 whatever the umask.
    public static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-plugins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try setMode(0o755, url)
        return url
    }

    public static func setMode(_ mode: Int, _ url: URL) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
    }

    public struct CompileError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Compiles `source` (a file of test-plugins/) with `cc -shared -fPIC` and `defines` into
    /// `folder/lib<name>.so`, mode 755, against a copy of the header in `folder/include`
    /// (the header as someone outside the repository has it). Returns the library's path.
    @discardableResult
    public static func compile(_ source: String, as name: String, into folder: URL, defines: [String] = []) throws -> String {
        let include = folder.appendingPathComponent("include")
        try FileManager.default.createDirectory(at: include, withIntermediateDirectories: true)
        let installed = include.appendingPathComponent("blurfarm_plugin.h")
        if !FileManager.default.fileExists(atPath: installed.path) {
            try FileManager.default.copyItem(at: header, to: installed)
        }
        let output = folder.appendingPathComponent("lib\(name).so")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["cc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-I", include.path]
            + defines.map { "-D" + $0 } + ["-o", output.path, Self.source(source).path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CompileError(description: "cc \(source): \(text)") }
        try setMode(0o755, output)
        return output.path
    }
}
