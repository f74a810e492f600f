// blurfarm-test-worker: `blurfarm-worker` for the tests that stall a worker in the middle of a
// whole-image task (WholeImageTests). The `fault` test plugin (test-plugins/fault.c) stalls a
// tile, but a chain with a plugin never goes to a worker whole (JobRunner.wholeImage), so here
// the built-in `motion` stalls instead, as `fault` does: the first process whose tile holds the
// pixel (5, 5) creates the file `$BLURFARM_TEST_STALL_MARKER` (exclusively), writes its pid into
// it and sleeps until it is killed, its heartbeats going on; every later attempt finds the file
// and renders. The coordinator is given this executable as its worker (`BLURFARM_WORKER`), and
// passes its environment on. Without the variable it is `blurfarm-worker`.
import BlurfarmCore
import BlurfarmKernels
import BlurfarmWorker

#if canImport(Glibc)
import Glibc
#endif

/// `motion` that stalls once on the tile holding (5, 5), creating `marker`; `filter` otherwise.
struct StallingFilter: Filter {
    let filter: any Filter
    let marker: String

    var origin: FilterDescriptor.Origin { filter.origin }
    var spec: FilterSpec { filter.spec }
    func reach(in image: Rect) -> Reach? { filter.reach(in: image) }

    func regionOfInterest(for output: Rect, image: Rect) -> Rect { filter.regionOfInterest(for: output, image: image) }
    func domainOfDefinition(forInput input: Rect, image: Rect) -> Rect { filter.domainOfDefinition(forInput: input, image: image) }
    func problem(forInput input: Rect, image: Rect) -> FilterFailure? { filter.problem(forInput: input, image: image) }
    func adapted(to colour: ColourMode) -> any Filter { StallingFilter(filter: filter.adapted(to: colour), marker: marker) }

    func apply(input: PixelBuffer, output: PixelBuffer, image: Rect) throws(FilterFailure) {
        if output.rect.contains(x: 5, y: 5) && claimMarker() {
            while true { sleep(3600) }
        }
        try filter.apply(input: input, output: output, image: image)
    }

    /// Creates `marker` with this process's pid in it; false when it exists already.
    private func claimMarker() -> Bool {
        let fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        let text = Array("\(getpid())\n".utf8)
        _ = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        return true
    }
}

/// The built-in filters, `motion` stalling once when `marker` is given.
func registry(marker: String?) -> FilterRegistry {
    guard let marker else { return .builtIn }
    var registry = FilterRegistry()
    for descriptor in FilterRegistry.builtIn.descriptors {
        registry.register(descriptor) { spec, schedule in
            let filter = FilterRegistry.builtIn.makeFilter(spec, schedule: schedule)
            return descriptor.name == "motion" ? StallingFilter(filter: filter, marker: marker) : filter
        }
    }
    return registry
}

// The arguments of `blurfarm-worker`: --worker-id N --coordinator-pid P [--plugin-folder F]…,
// or --libvips-version.
if Array(CommandLine.arguments.dropFirst()) == ["--libvips-version"] {
    print(WorkerProcess.libvipsReport)
    exit(0)
}
var options: [String: [String]] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst(), let value = arguments.popFirst() { options[name, default: []].append(value) }
guard let workerID = options["--worker-id"]?.first.flatMap(UInt32.init),
    let coordinatorPID = options["--coordinator-pid"]?.first.flatMap(Int32.init)
else {
    let usage = Array("usage: blurfarm-test-worker --worker-id N --coordinator-pid P [--plugin-folder F]...\n".utf8)
    _ = usage.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(64)
}
let marker = getenv("BLURFARM_TEST_STALL_MARKER").map { String(cString: $0) }
exit(
    WorkerProcess.run(
        workerID: workerID, coordinatorPID: coordinatorPID, pluginFolders: options["--plugin-folder"] ?? [],
        registry: registry(marker: marker)))
