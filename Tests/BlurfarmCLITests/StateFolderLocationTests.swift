import BlurfarmTestSupport
import Foundation
import Testing

/// Where a run keeps its records: the configuration's `state` (relative to the configuration
/// file, wherever the run starts), else the user's state folder, never the checkout (issue 10,
/// defect 9).
@Suite(.tags(.process), .blocking) struct StateFolderLocationTests {
    /// A folder with `job/one.job` (one small input) and `config/`.
    static func makeFolder() throws -> URL {
        let root = try Fixtures.temporaryFolder()
        for folder in ["job", "config", "elsewhere"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        var random = SplitMix(seed: 4)
        try IncrementalRunTests.ppm(width: 12, height: 10, using: &random).write(to: root.appendingPathComponent("job/in.ppm"))
        try """
            job: one
            inputs: [in.ppm]
            outputs:
              - name: copy
                path: out/{stem}.png

            """.write(to: root.appendingPathComponent("job/one.job"), atomically: true, encoding: .utf8)
        return root
    }

    /// The job folders in `state`'s `jobs/`.
    static func jobs(in state: URL) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: state.appendingPathComponent("jobs").path)) ?? []
    }

    @Test func withoutStateTheRecordsGoToTheUsersStateFolder() throws {
        let root = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        try "tile: 64\n".write(to: root.appendingPathComponent("config/farm.conf"), atomically: true, encoding: .utf8)
        let arguments = ["run", "job/one.job", "--config", "config/farm.conf", "--workers", "0", "--force"]

        let xdg = root.appendingPathComponent("xdg")
        let first = try Blurfarm.run(arguments, in: root, environment: ["XDG_STATE_HOME": xdg.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(Self.jobs(in: xdg.appendingPathComponent("blurfarm")).count == 1)

        // No XDG_STATE_HOME (empty counts as unset): the home folder's.
        let home = root.appendingPathComponent("home")
        let second = try Blurfarm.run(arguments, in: root, environment: ["XDG_STATE_HOME": "", "HOME": home.path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(Self.jobs(in: home.appendingPathComponent(".local/state/blurfarm")).count == 1)
        // Nothing beside the configuration or the job.
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("config").path) == ["farm.conf"])
    }

    @Test func aRelativeStateIsRelativeToTheConfigurationFileAndTheReportNamesItAbsolutely() throws {
        let root = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        try "state: ../state\n".write(to: root.appendingPathComponent("config/farm.conf"), atomically: true, encoding: .utf8)
        // Run from another folder, naming the files relatively.
        let report = root.appendingPathComponent("report.json")
        let result = try Blurfarm.run(
            ["run", "../job/one.job", "--config", "../config/farm.conf", "--workers", "0", "--report", report.path],
            in: root.appendingPathComponent("elsewhere"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.jobs(in: root.appendingPathComponent("state")).count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("elsewhere").path).isEmpty)
        let list = try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [[String: Any]]
        let settings = list?.first?["settings"] as? [String: Any]
        let configuration = root.appendingPathComponent("config/farm.conf").standardizedFileURL.path
        #expect(settings?["configuration"] as? String == configuration, "\(String(describing: settings))")
        // The state folder's own report too.
        let reports = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("state/reports").path)
        #expect(reports.count == 1)
    }
}
