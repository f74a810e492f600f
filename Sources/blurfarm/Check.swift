import ArgumentParser
import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmWorker
import Foundation

/// `blurfarm check`: validate jobs and print their plans without touching a pixel.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check job manifests and print what they would do, without touching a pixel.",
        discussion: """
            Parses and validates each manifest and the configuration, expands the inputs, and \
            prints the plan: each input with its size (read from the file's header), its \
            outputs, each variant's filter chain with its reach in pixels, and the tiles.

            Exit status: 0 valid and every input readable; 1 valid but some input unreadable \
            (or a folder under a glob, or a file name holding U+F780…U+F7FF: one line each); \
            2 a manifest or the configuration is invalid.
            """)

    @Argument(help: "Job manifests.")
    var jobs: [String]

    @OptionGroup var farm: FarmOptions

    @Option(help: "Tile side in pixels, overriding the manifest and configuration (0: one tile per image).")
    var tile: Int?

    func run() throws {
        let (configuration, registry, plans) = try loadJobs(jobs, farm: farm, tileOverride: tile)
        var unreadable = 0
        for plan in plans {
            for line in plan.refused { printError("\(plan.manifestPath): \(line)") }
            unreadable += plan.refused.count
            print("\(plan.manifestPath): job '\(plan.job.name)': \(counted(plan.inputs.count, "input")), \(counted(plan.outputCount, "output")), "
                + (plan.tileSize == 0 ? "one tile per image" : "tiles of \(plan.tileSize) px"))
            if plan.inputs.isEmpty { print("  no file matches the inputs") }
            for input in plan.inputs {
                let header: ImageHeader
                do {
                    header = try ImageReader.header(ofFile: input.path)
                } catch {
                    unreadable += 1
                    print("  \(ShownName.of(input.relativePath)): cannot be read")
                    printError(error.description)
                    continue
                }
                let limit = header.pixelCount > configuration.pixelLimit ? " (over the pixel limit)" : ""
                print("  \(ShownName.of(input.relativePath))  \(header.width)x\(header.height)\(limit)")
                for output in input.outputs {
                    print("    \(output.variant.name) -> \(ShownName.of(output.path))  " + describe(output.variant, header, plan, registry))
                }
            }
        }
        if unreadable > 0 { throw ExitCode(ExitStatus.someFailed) }
    }

    private func describe(_ variant: VariantSpec, _ header: ImageHeader, _ plan: JobPlan, _ registry: FilterRegistry)
        -> String
    {
        var parts: [String] = []
        var size = (width: header.width, height: header.height)
        if let resize = variant.resize {
            size = resize.targetSize(width: header.width, height: header.height)
            parts.append("resize \(resize.fit.rawValue) to \(size.width)x\(size.height)")
        }
        if variant.filters.isEmpty {
            parts.append("no filters")
        } else {
            let chain = FilterChain(
                filters: variant.filters.map { registry.makeFilter($0) }, edge: variant.edge, colour: variant.colour)
            let tiles = TileGrid(bounds: chain.outputRect(forImage: Rect(width: size.width, height: size.height)),
                tileSize: plan.tileSize).count
            parts.append(chain.filters.map { $0.spec.description }.joined(separator: " | "))
            parts.append(chain.reach.map { "reach \($0)" } ?? "reach: the plugins' regions of interest, tile by tile")
            parts.append("edge \(variant.edge.rawValue), colour \(variant.colour.rawValue)")
            parts.append(counted(tiles, "tile"))
        }
        return parts.joined(separator: "; ")
    }
}
