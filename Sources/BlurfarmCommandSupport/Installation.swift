import BlurfarmCore
import Foundation

/// Where the running blurfarm is, and the files it ships: its executable, the worker beside
/// it, the configuration and the status page of its checkout or installation.
public enum Installation {
    /// The running executable, symbolic links resolved (`/proc/self/exe`): what the benchmarks
    /// time and Slurm's tasks run. Read once, at its first use: a run asks for it several times
    /// (the worker beside it, the plugin folders), and each resolving costs a dozen system calls.
    public static let executable: String = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path

    /// The folder of the running executable: what the plugin folder `{build}` stands for.
    public static var executableFolder: String { PathName.folder(of: executable) }

    /// `relative` in the first of the executable's folder (the kernel's answer, ``executable``:
    /// `argv[0]` is only a name when the executable was found on the `PATH`) and its ancestors
    /// that has it, five at most: a file of the checkout (or of the installation) the executable
    /// belongs to (a build lives in `.build/<triple>/<configuration>/` of the checkout).
    public static func shipped(_ relative: String) -> String? {
        var folder = URL(fileURLWithPath: executableFolder, isDirectory: true)
        for _ in 0..<5 {
            let candidate = folder.appendingPathComponent(relative).path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
            folder.deleteLastPathComponent()
        }
        return nil
    }

    /// The folder detectors find their models in (docs/manifest.md#regions-a-detector-finds): the one
    /// `$BLURFARM_MODELS` in `environment` names, else `models/` of the checkout (where
    /// scripts/setup.sh puts CenterFace), else `share/blurfarm/models/` of the installation
    /// (scripts/install.sh); the last, to be named in the detector's error, when neither is there.
    public static func modelFolder(environment: [String: String]) -> String {
        if let named = environment["BLURFARM_MODELS"], !named.isEmpty { return named }
        return shipped("models") ?? shipped("share/blurfarm/models") ?? executableFolder + "/../share/blurfarm/models"
    }

    /// The worker executable: the one `$BLURFARM_WORKER` in `environment` names, else
    /// `blurfarm-worker` beside this executable (where `swift build` puts it), else in
    /// `../libexec/blurfarm/` from this executable's folder (where scripts/install.sh puts it);
    /// the first of the two when neither is there, which the pool then names in its error, with
    /// these places.
    public static func workerExecutable(environment: [String: String]) -> String {
        if let named = environment["BLURFARM_WORKER"], !named.isEmpty { return named }
        let places = [executableFolder + "/blurfarm-worker", executableFolder + "/../libexec/blurfarm/blurfarm-worker"]
        return places.first { FileManager.default.isExecutableFile(atPath: $0) } ?? places[0]
    }
}
