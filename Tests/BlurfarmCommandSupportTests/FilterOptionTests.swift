import BlurfarmCommandSupport
import BlurfarmFarm
import BlurfarmCore
import BlurfarmKernels
import BlurfarmManifest
import Testing

/// `--filter` types a parameter's value as a manifest does: by the parameter's kind, so the same
/// words mean the same on the command line and in a job.
@Suite struct FilterOptionTests {
    /// A registry with a filter taking a free string, a colour and an integer.
    static let registry: FilterRegistry = {
        var registry = FilterRegistry.builtIn
        registry.register(
            FilterDescriptor(
                name: "label", summary: "test",
                parameters: [
                    ParameterDescriptor(name: "mode", kind: .string(choices: []), defaultValue: .string(""), summary: ""),
                    ParameterDescriptor(name: "count", kind: .integer, defaultValue: .integer(1), summary: ""),
                ],
                origin: .builtIn),
            factory: { _, _ in FilterRegistry.builtIn.makeFilter(FilterSpec(name: "gaussian", arguments: ["sigma": .number(1)])) })
        return registry
    }()

    @Test func aStringParameterThatLooksLikeANumberIsTheTextAsInAManifest() throws {
        let option = try FilterOption.parse("label mode=2 count=3", registry: Self.registry).get()
        let manifest = """
            job: j
            inputs: [a.png]
            outputs:
              - name: v
                path: out/{stem}.png
                filters:
                  - label:
                      mode: 2
                      count: 3

            """
        let job = try JobDecoder.decode(manifest, file: "j.job", filters: Self.registry.descriptors).get()
        #expect(option.arguments["mode"] == .string("2"))
        #expect(option.arguments["count"] == .integer(3))
        #expect(job.outputs[0].filters[0].arguments == option.arguments)
    }

    @Test func aNumberForAnIntegerIsStillRefused() {
        #expect(throws: OptionError.self) { try FilterOption.parse("label count=2.5", registry: Self.registry).get() }
    }
}
