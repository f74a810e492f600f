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
