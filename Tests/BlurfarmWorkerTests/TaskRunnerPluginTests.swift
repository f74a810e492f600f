import BlurfarmCore
import BlurfarmKernels
import BlurfarmPlugins
import BlurfarmTestSupport
import BlurfarmWire
import BlurfarmWorker
import Foundation
import Testing

/// A worker's task runner loads plugins by name from its plugin folders when a task names one,
/// and a task can never make it load a path.
@Suite struct TaskRunnerPluginTests {
    static let runner = TaskRunner(plugins: PluginLoader(folders: [TestPlugins.buildFolder]), segments: nil)

    @Test func aTaskNamingAPluginIsRenderedByThePlugin() throws {
        let spec = FilterSpec(name: "vignette", arguments: ["strength": .number(0.8), "radius": .number(0.2)])
        let task = WorkerConversationTests.inlineTask(id: 7, filters: [spec], size: 12)
        let answer = Self.runner.execute(task)
        let output = try #require(answer.taskResult?.output, "no result with pixels: \(answer)")
        let source = try #require(task.pixels.inlineSource, "an inline task's pixels are not inline")
        let plugin = try PluginLoader(folders: [TestPlugins.buildFolder]).load(named: "vignette")
        let expected = PixelBuffer(rect: task.tile, channels: 3)
        try FilterChain(filters: [PluginFilter(plugin: plugin, spec: spec, mayRun: true)])
            .render(tile: task.tile, source: source.makeBuffer(), into: expected)
        #expect(output.makeBuffer().isBitIdentical(to: expected))
        #expect(!output.makeBuffer().isBitIdentical(to: source.makeBuffer()), "the vignette changed nothing")
    }

    @Test(arguments: ["../vignette", "/tmp/libvignette", "a/b"])
    func aTaskNamingAPathIsAFailureAndNothingIsLoaded(name: String) {
        let task = WorkerConversationTests.inlineTask(id: 8, filters: [FilterSpec(name: name, arguments: [:])])
        #expect(Self.runner.execute(task) == .failure(TaskFailure(
            taskID: 8,
            message: "filter 1: unknown filter '\(name)'; as a plugin: '\(name)': a plugin name is never a path: "
                + "plugins load by name from the plugin folders only")))
    }

    @Test func aTaskNamingNoPluginSaysWhereItLooked() {
        let task = WorkerConversationTests.inlineTask(id: 9, filters: [FilterSpec(name: "zooom", arguments: [:])])
        #expect(Self.runner.execute(task) == .failure(TaskFailure(
            taskID: 9,
            message: "filter 1: unknown filter 'zooom'; as a plugin: 'zooom': no libzooom.so in the plugin folders "
                + "(\(TestPlugins.buildFolder))")))
    }

    /// The worker checks a plugin's answers before it uses them, whatever the coordinator did.
    @Test(.tags(.process)) func aTaskWhosePluginAnswersA2GigapixelDomainIsAFailureNamingThePlugin() throws {
        let folder = try TestPlugins.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try TestPlugins.compile("misbehave.c", as: "huge", into: folder, defines: ["NAME=\"huge\"", "DOMAIN=44722,44722"])
        let runner = TaskRunner(plugins: PluginLoader(folders: [folder.path]), segments: nil)
        let inline = WorkerConversationTests.inlineTask(id: 10, filters: [FilterSpec(name: "huge", arguments: [:])])
        let task = TaskMessage(
            taskID: 10, imageID: 1, attempt: 1, tile: inline.tile, image: inline.image, filters: inline.filters,
            edge: .grow, colour: .gamma, pixels: inline.pixels)
        #expect(runner.execute(task) == .failure(TaskFailure(
            taskID: 10,
            message: "plugin 'huge' domain_of_definition returned the rectangle 44722x44722+0+0 for 8x8+0+0, out of bounds: "
                + "at most 56x56+-24+-24 "
                + "(the rectangle given and the image, grown on each side by the size of either, the larger, and 16 px)")))
    }
}
