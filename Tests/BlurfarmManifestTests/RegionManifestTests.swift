import BlurfarmCore
import BlurfarmManifest
import Testing

/// `regions` and `invert` in a manifest: every shape, unit and key, where each region is
/// written, and the printer's form of them.
@Suite struct RegionManifestTests {
    static let manifest = """
        job: regions
        inputs: [photos/*.jpg]
        outputs:
          - name: button
            path: out/{stem}.png
            filters:
              - gaussian:
                  sigma: 12
              - tint:
                  style: light
            regions:
              - rect:
                  x: 10%
                  y: 70%
                  width: 80%
                  height: 60
                  corner-radius: 16
                  feather: 1.5
              - ellipse:
                  x: -20
                  y: 12.5%
                  width: 90
                  height: 120
            invert: true

        """

    static let catalogue = [
        TestCatalogue.gaussian,
        FilterDescriptor(
            name: "tint", summary: "tint",
            parameters: [ParameterDescriptor(name: "style", kind: .string(choices: ["light", "dark"]), summary: "preset")],
            origin: .builtIn),
    ]

    @Test func regionsDecodeWithTheirUnitsAndPlaces() throws {
        let job = try JobDecoder.decode(Self.manifest, file: "r.job", filters: Self.catalogue).get()
        let variant = job.outputs[0]
        #expect(variant.regions == RegionMask(
            regions: [
                Region(x: .percent(10), y: .percent(70), width: .percent(80), height: .pixels(60), cornerRadius: 16, feather: 1.5),
                Region(shape: .ellipse, x: .pixels(-20), y: .percent(12.5), width: .pixels(90), height: .pixels(120)),
            ],
            invert: true))
        #expect(variant.regionLocations.map { "\($0.line):\($0.column)" } == ["12:9", "19:9"])
        let printed = ManifestPrinter.print(job)
        #expect(printed.contains("""
                regions:
                  - rect:
                      x: 10%
                      y: 70%
                      width: 80%
                      height: 60
                      corner-radius: 16
                      feather: 1.5
                  - ellipse:
                      x: -20
                      y: 12.5%
                      width: 90
                      height: 120
                      feather: 0
                invert: true

            """))
        #expect(try JobDecoder.decode(printed, file: "p.job", filters: Self.catalogue).get() == job)
    }

    @Test func regionsTakePartInTheVariantsEquality() throws {
        let job = try JobDecoder.decode(Self.manifest, file: "r.job", filters: Self.catalogue).get()
        var moved = job
        moved.outputs[0].regions.regions[0].x = .pixels(10)
        #expect(moved != job)
        var uninverted = job
        uninverted.outputs[0].regions.invert = false
        #expect(uninverted != job)
    }
}
