import BlurfarmCore
import BlurfarmKernels
import Testing

/// Filters in words, as `blurfarm filters` and `--filter` say them (BlurfarmCore's `FilterDescriptor+Text`).
@Suite struct FilterDescriptorTextTests {
    static let frost = FilterDescriptor(
        name: "tint", summary: "a colour over the image",
        parameters: [
            ParameterDescriptor(name: "amount", kind: .integer, defaultValue: .integer(1), summary: "how much"),
        ],
        origin: .plugin(path: "/p/libtint.so"))

    @Test func theListingIsNameOriginSummaryAndABriefLinePerParameter() {
        #expect(Self.frost.listing == "tint  (plugin /p/libtint.so)\n    a colour over the image\n    amount: \(Self.frost.parameters[0].rangeDescription), default 1")
    }

    @Test func theDetailsSayWhereItRunsAndEachParametersSummary() {
        let lines = Self.frost.details.split(separator: "\n").map(String.init)
        #expect(lines.first == "tint: a colour over the image")
        #expect(lines.contains("runs in: worker processes"))
        #expect(lines.suffix(2) == ["  " + Self.frost.parameters[0].brief, "      how much"])
    }

    @Test func anUnknownNameGetsTheNearestAndEveryName() {
        #expect(FilterDescriptor.unknown("gausian", among: FilterRegistry.builtIn.descriptors).hasPrefix(
            "unknown filter 'gausian' (did you mean 'gaussian'?); available: gaussian, "))
        #expect(!FilterDescriptor.unknown("xyzzy", among: [Self.frost]).contains("did you mean"))
    }

    @Test func theJSONCarriesTheDefaultAsWrittenAndWhetherItIsAPlugin() {
        let json = FilterJSON(Self.frost)
        #expect(json.plugin && json.origin == "plugin /p/libtint.so")
        #expect(json.parameters.map(\.default) == ["1"])
    }
}
