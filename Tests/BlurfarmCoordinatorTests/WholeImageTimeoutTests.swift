import BlurfarmCore
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmPool
import Testing

@testable import BlurfarmCoordinator

/// A whole image's task is allowed time for what its filters read (``TaskTimeout``), as a
/// tile's is: its output grown by `edge: grow`, the filters' reach around it.
@Suite struct WholeImageTimeoutTests {
    static func outputs(_ manifest: String) throws -> [PlannedOutput] {
        let job = try JobDecoder.decode(manifest, file: "t.job", filters: FilterRegistry.builtIn.descriptors).get()
        return job.outputs.map { PlannedOutput(variant: $0, path: "out/\($0.name).png") }
    }

    @Test func aTaskIsAllowedTimeForTheFiltersReadsOverItsGrownOutput() throws {
        let image = Rect(width: 64, height: 40)
        let variants = """
            job: t
            inputs: [in/*.jpg]
            outputs:
              - name: plain
                path: out/{stem}-p.png
              - name: grown
                path: out/{stem}-g.png
                edge: grow
                filters:
                  - motion:
                      radius: 2000
                      angle: 45

            """
        let outputs = try Self.outputs(variants)
        let (plain, grown) = (outputs[0], outputs[1])
        // A conversion: its decode twice, the copy of its pixels and its encode.
        #expect(JobRunner.pixelsRead(of: [plain], image: image, registry: .builtIn) == 4 * image.area)
        // The motion blur grown from 64 x 40 writes a 2,893 x 2,869 image, its filter reading
        // more around it: two decodes and two encodes an output allowed 2.2 s, and it takes 10
        // (it was killed four times).
        let chain = JobRunner.chain(of: grown, registry: .builtIn)
        let made = chain.outputRect(forImage: image)
        #expect(made.area > 8_000_000)
        let read = JobRunner.pixelsRead(of: [plain, grown], image: image, registry: .builtIn)
        #expect(read == 4 * image.area + chain.pixelsRead(for: made, image: image) + made.area)
        #expect(TaskTimeout.adaptive.limit(pixelsRead: read, slowestSoFar: .zero) > .seconds(300))
    }
}
