import Foundation

/// Where one job keeps its lock and records in the state folder:
/// `<state>/jobs/<job name>-<16 hex digits>/`, the digits a hash of the manifest's absolute
/// path. A job is its manifest: two manifests that happen to give the same `job:` name are
/// two jobs, and moving a manifest starts its records afresh.
public struct JobStateFolder: Sendable {
    /// The folder.
    public let path: String

    /// The folder of the job read from `manifestPath` (relative to the working directory) named
    /// `jobName`, in the state folder `state`.
    public init(state: String, jobName: String, manifestPath: String) {
        let manifest = URL(fileURLWithPath: manifestPath).standardizedFileURL.resolvingSymlinksInPath().path
        let digits = ContentHash.of(manifest).prefix(16)
        path = (state as NSString).appendingPathComponent("jobs/\(jobName)-\(digits)")
    }

    /// The lock file.
    public var lockPath: String { (path as NSString).appendingPathComponent("lock") }
}
