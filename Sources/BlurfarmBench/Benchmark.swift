/// A benchmark of `blurfarm bench` other than the figures of ``LibvipsComparison`` (one whose
/// figure stands beside libvips borrows its lanes, as ``ScaleBench`` does): it runs, and its
/// typed result is printed as JSON or, by ``text(_:version:)``, as a table.
public protocol Benchmark {
    associatedtype Result: Encodable
    /// Measures.
    func run() throws -> Result
    /// `result` as its subcommand prints it, under a heading naming blurfarm's `version`.
    func text(_ result: Result, version: String) -> String
}

extension EngineBench: Benchmark {}
extension FileDepthBench: Benchmark {}
extension ManifestBench: Benchmark {}
extension FarmBench: Benchmark {}
extension FaceBench: Benchmark {}
extension ScaleBench: Benchmark {}
