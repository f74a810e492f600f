import BlurfarmCommandSupport
import BlurfarmFarm
import Foundation
import Testing

/// `run --log`'s lines (BlurfarmFarm's `RunLog`), by value.
@Suite struct RunLogTests {
    @Test func eachLineIsStampedWithTheProcessAndEscaped() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-runlog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("run.log").path
        try RunLog(path: path).write("a\nb")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix(" blurfarm[\(getpid())]: a\\nb\n"), "\(text)")
        #expect(text.split(separator: "\n").count == 1)
    }

    @Test func aLogInAMissingFolderIsOneLineNamingIt() throws {
        let error = #expect(throws: OptionError.self) { try RunLog(path: "/nonexistent/folder/run.log") }
        #expect(error?.description.contains("/nonexistent/folder/run.log") == true, "\(String(describing: error))")
        #expect(error?.description.contains("\n") == false)
        #expect(try RunLog.open(nil) == nil)
    }
}
