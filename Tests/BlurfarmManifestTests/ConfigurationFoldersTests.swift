import BlurfarmManifest
import Testing

/// A configuration's folders made absolute (``FarmConfiguration/withFolders(madeAbsoluteBy:)``).
@Suite struct ConfigurationFoldersTests {
    @Test func theStateAndPluginFoldersAreMadeAbsoluteButBuild() {
        var configuration = FarmConfiguration()
        configuration.state = "state"
        configuration.pluginFolders = ["plugins", FarmConfiguration.buildFolder]
        let absolute = configuration.withFolders { "/srv/" + $0 }
        #expect(absolute.state == "/srv/state")
        #expect(absolute.pluginFolders == ["/srv/plugins", FarmConfiguration.buildFolder])
    }
}

/// The configuration file in force and the command line's limits (``FarmConfiguration/path(given:environment:shipped:)``,
/// ``FarmConfiguration/limited(pixelLimit:memoryLimit:)``), and `apply --resize`'s box (``ResizeSpec/box(_:)``).
@Suite struct ConfigurationLookupTests {
    @Test func theGivenFileThenTheEnvironmentsThenTheShippedOne() {
        #expect(FarmConfiguration.path(given: "a.conf", environment: ["BLURFARM_CONFIG": "b.conf"], shipped: "c.conf") == "a.conf")
        #expect(FarmConfiguration.path(given: nil, environment: ["BLURFARM_CONFIG": "b.conf"], shipped: "c.conf") == "b.conf")
        #expect(FarmConfiguration.path(given: nil, environment: ["BLURFARM_CONFIG": ""], shipped: "c.conf") == "c.conf")
        #expect(FarmConfiguration.path(given: nil, environment: [:], shipped: nil) == nil)
    }

    @Test func aLimitGivenReplacesTheConfigurationsOnly() {
        var configuration = FarmConfiguration()
        configuration.memoryLimit = 5
        let limited = configuration.limited(pixelLimit: 100, memoryLimit: nil)
        #expect(limited.pixelLimit == 100 && limited.memoryLimit == 5)
    }

    @Test func aBoxIsWidthByHeightEitherSideOptional() {
        #expect(ResizeSpec.box("256x128").map { "\($0.width ?? 0) \($0.height ?? 0)" } == "256 128")
        #expect(ResizeSpec.box("256").map { "\($0.width ?? 0) \($0.height == nil)" } == "256 true")
        #expect(ResizeSpec.box("x64").map { "\($0.width == nil) \($0.height ?? 0)" } == "true 64")
        #expect(ResizeSpec.box("x") == nil && ResizeSpec.box("0x5") == nil && ResizeSpec.box("ax5") == nil)
    }
}
