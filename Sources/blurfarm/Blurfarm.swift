import ArgumentParser
import BlurfarmCommandSupport
import BlurfarmImageIO
import BlurfarmSystem
import CSystemShims

/// The `blurfarm` command: a thin driver of the library modules.
@main
struct Blurfarm: AsyncParsableCommand {
    /// What `--version` prints: blurfarm's version, the libvips version loaded (part of every
    /// output's recipe), whether that libvips can write AVIF, and the CPU the kernels were built
    /// for, one per line.
    static var versionText: String {
        "blurfarm \(Release.version)\nlibvips \(ImageReader.libvipsVersion)\n\(avifLine)\n"
            + "cpu-target \(String(cString: blurfarm_cpu_target()))"
    }

    /// `--version` is answered here, before the argument parser: the configuration below is
    /// built by every blurfarm process, workers included, and finding out whether AVIF can be
    /// written encodes a small image with libheif's AV1 encoder (threads of its own, which a
    /// process limit may not leave room for). Only `--version` and `filters` ask.
    ///
    /// SIGXFSZ is ignored first: a write past the file-size limit (`ulimit -f`) then fails with
    /// EFBIG, which names the file and removes its temporary file, instead of killing the
    /// process without a word (docs/security.md).
    static func main() async {
        try? Syscalls.ignoreFileSizeSignal()  // sigaction fails only for a signal that does not exist
        // As a worker does (WorkerProcess), an image's buffers (decoded windows, bands, encoded
        // bytes) serve the next instead of being mapped afresh and faulted in, page by page: on
        // a 1080p batch in process, 82,690 page faults before, 27,781 after (docs/performance-history.md).
        // The heaps stay per thread (lanes, the tile executor, the server's).
        Syscalls.reuseFreedMemory(arenas: 0)
        if Array(CommandLine.arguments.dropFirst()) == ["--version"] {
            print(versionText)
            return
        }
        await main(nil)
    }

    /// `avif-output yes`, or `avif-output no (why)`: whether `.avif` outputs can be written.
    static var avifLine: String {
        ImageWriter.unavailability(of: .avif).map { "avif-output no (\($0))" } ?? "avif-output yes"
    }

    static let configuration = CommandConfiguration(
        commandName: "blurfarm",
        abstract: "A batch render farm for image filters (gaussian, motion, frost, tint and plugins): tiled, exact.",
        discussion: """
            Examples:
              blurfarm run jobs/example.job
              blurfarm check jobs/example.job
              blurfarm filters
              blurfarm apply photo.jpg blurred.jpg --filter 'gaussian sigma=8'
              blurfarm apply in.png out.png --edge mirror --filter 'motion radius=20'
              blurfarm apply in.jpg out.jpg --filter 'frost style=dark'
              blurfarm bench

            Documentation: README.md and docs/ in the source tree.
            """,
        // For the help's `--version` line; `main` prints `versionText` (with the AVIF line).
        version: "blurfarm \(Release.version)",
        // Every command names itself (`commandName`): without it ArgumentParser derives the name
        // from the type's through `String(describing:)`, whose failing casts each scan every
        // protocol conformance of the executable, milliseconds of every start.
        subcommands: [
            Apply.self, Check.self, Run.self, Slurm.self, Serve.self, Submit.self, Jobs.self, Job.self, Cancel.self,
            Retry.self, Filters.self, Bench.self,
        ])
}
