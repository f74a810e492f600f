import BlurfarmCommandSupport
import BlurfarmFarm
import Foundation
import Testing

/// Where the running blurfarm is and what it ships (BlurfarmFarm's `Installation`), by value.
@Suite struct InstallationTests {
    @Test func theWorkerIsTheEnvironmentsElseBesideTheExecutable() {
        #expect(Installation.workerExecutable(environment: ["BLURFARM_WORKER": "/opt/w"]) == "/opt/w")
        #expect(Installation.workerExecutable(environment: ["BLURFARM_WORKER": ""]).hasPrefix(Installation.executableFolder + "/"))
    }

    @Test func aShippedFileIsFoundAboveTheExecutableAndAMissingOneIsNot() {
        #expect(Installation.shipped("Package.swift") != nil)
        #expect(Installation.shipped("no/such/file") == nil)
        #expect(Installation.executable.hasPrefix("/"))
    }
}
