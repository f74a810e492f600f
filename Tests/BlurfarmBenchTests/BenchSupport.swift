import BlurfarmBench
import BlurfarmTestSupport
import Foundation

/// What the benchmark tests run on: the built `blurfarm`, the lookup's locations with a cache of
/// their own, and whether the venv with libvips 8.18 is there.
enum BenchFixture {
    static var executable: String { BuiltExecutable.url.path }

    /// The locations the lookup finds from the built executable, with the generated images in a
    /// temporary cache (the tests generate small ones), removed when the tests' process ends.
    static let locations: BenchLocations? = {
        guard var found = try? BenchLocations.find(executable: BuiltExecutable.url.path, corpus: Corpus.root) else { return nil }
        found.cache = cache
        atexit { try? FileManager.default.removeItem(atPath: BenchFixture.cache) }
        return found
    }()

    /// The generated images' cache, one for each process of tests.
    static var cache: String {
        FileManager.default.temporaryDirectory.appendingPathComponent("blurfarm-bench-tests-\(getpid())").path
    }

    /// Whether scripts/setup.sh has made the venv with libvips 8.18 (`.venv-bench`).
    static var hasVenv: Bool { locations.map { FileManager.default.isExecutableFile(atPath: $0.python) } ?? false }

    /// The settings of a tiny comparison: one run, one sigma, small images.
    static var tiny: LibvipsComparison.Settings {
        var settings = LibvipsComparison.Settings()
        settings.runs = 1
        settings.sigmas = [8]
        settings.kernelSigmas = [2]
        settings.batchImages = 2
        settings.image = "photos/mate-GreenMeadow.jpg"
        settings.bigWidth = 1500
        settings.bigHeight = 1100
        settings.webPhotos = 2
        settings.webMegapixels = 2...2.5
        return settings
    }

    static func comparison(_ settings: LibvipsComparison.Settings = tiny) throws -> LibvipsComparison {
        let locations = try requireLocations()
        return LibvipsComparison(executable: executable, locations: locations, settings: settings)
    }
}

/// The locations, or an error saying the lookup failed.
func requireLocations() throws -> BenchLocations {
    guard let locations = BenchFixture.locations else { throw BenchError("the benchmark lookup found no repository or corpus") }
    return locations
}
