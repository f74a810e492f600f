import BlurfarmCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The arithmetic and clocks every benchmark shares.
public enum BenchStatistics {
    /// The median of `values` (the upper one of an even count); 0 for none.
    public static func median(_ values: [Double]) -> Double {
        values.isEmpty ? 0 : values.sorted()[values.count / 2]
    }

    /// The wall time `body` takes, in seconds.
    public static func wallSeconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return (ContinuousClock.now - start).seconds
    }

    /// The processor time `body` takes, in seconds: this process's, all threads, so that other
    /// processes on a busy machine do not count.
    public static func processorSeconds(_ body: () -> Void) -> Double {
        var start = timespec(), end = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start)
        body()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &end)
        return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
    }
}


/// Facts about this machine for benchmark reports.
public enum Machine {
    /// The CPU's model name from /proc/cpuinfo.
    public static var cpuModel: String {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
            let model = line.split(separator: ":", maxSplits: 1).last
        else { return "unknown CPU" }
        return model.trimmingCharacters(in: .whitespaces)
    }

    /// The cores this process may use.
    public static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// The model and the cores, as the reports print them.
    public static var summary: String { "\(cpuModel), \(cores) cores" }
}
