import BlurfarmCore
import BlurfarmKernels

#if canImport(Glibc)
import Glibc
#endif

/// `fault`: a filter for testing the farm's failure handling. It exists only in debug builds
/// (the tests'): a release build has neither the filter nor the environment variable that
/// turns it on. Even there it is registered only when the environment has
/// `BLURFARM_FAULT_INJECTION=1` (which worker processes, and the shards a Slurm test submits,
/// inherit), so no normal manifest can name it. It copies its input, except on the tiles whose output holds
/// the pixel (`x`, `y`), where it does what `action` says:
///
/// - `crash`: the process dies of SIGSEGV, on every attempt.
/// - `stall`: the first process to get there creates the file `marker` (exclusively), writes
///   its pid into it and sleeps until it is killed, its heartbeats going on; every later
///   attempt finds the file and copies. A test waits for the file and kills, stops or lets
///   the task timeout take the process it names.
#if DEBUG
public struct FaultInjectionFilter: UniformReachFilter {
    /// The environment variable that makes ``FilterRegistry/forThisProcess`` register it.
    public static let environmentVariable = "BLURFARM_FAULT_INJECTION"

    public static let descriptor = FilterDescriptor(
        name: "fault",
        summary: "test only: copies the image, but crashes or stalls on the tile holding one pixel",
        parameters: [
            ParameterDescriptor(name: "x", kind: .integer, isRequired: true, summary: "column of the pixel"),
            ParameterDescriptor(name: "y", kind: .integer, isRequired: true, summary: "row of the pixel"),
            ParameterDescriptor(
                name: "action", kind: .string(choices: ["crash", "stall"]), isRequired: true,
                summary: "crash: die of SIGSEGV every time; stall: the first attempt sleeps until killed"),
            ParameterDescriptor(
                name: "marker", kind: .string(choices: []), defaultValue: .string(""),
                summary: "stall: the file the stalled process creates with its pid"),
        ],
        origin: .builtIn)

    public let x: Int
    public let y: Int
    public let action: String
    public let marker: String

    public var spec: FilterSpec {
        FilterSpec(
            name: "fault",
            arguments: ["x": .integer(x), "y": .integer(y), "action": .string(action), "marker": .string(marker)])
    }

    public var reach: Reach { Reach(x: 0, y: 0) }

    public func apply(input: PixelBuffer, output: PixelBuffer, image _: Rect) {
        if output.rect.contains(x: x, y: y) {
            switch action {
            case "crash":
                signal(SIGSEGV, SIG_DFL)
                raise(SIGSEGV)
            default:
                if claimMarker() {
                    while true { sleep(3600) }
                }
            }
        }
        output.copy(output.rect, from: input)
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

#endif

extension FilterRegistry {
    /// The filters of this process: the built-in ones, and in a debug build
    /// ``FaultInjectionFilter`` when the environment asks for it. The coordinator and its
    /// workers see the same environment, so they agree.
    public static var forThisProcess: FilterRegistry {
        var registry = FilterRegistry.builtIn
        #if DEBUG
        if let value = getenv(FaultInjectionFilter.environmentVariable), String(cString: value) == "1" {
            registry.register(FaultInjectionFilter.descriptor) { spec, _ in
                func text(_ name: String) -> String {
                    if case .string(let s) = spec.arguments[name] { s } else { "" }
                }
                func integer(_ name: String) -> Int {
                    if case .integer(let n) = spec.arguments[name] { n } else { 0 }
                }
                return FaultInjectionFilter(x: integer("x"), y: integer("y"), action: text("action"), marker: text("marker"))
            }
        }
        #endif
        return registry
    }
}
