import BlurfarmState
import BlurfarmSystem
import Foundation
import Synchronization

/// An unnamed file (`O_TMPFILE`) that holds bytes a run would otherwise hold in memory for as
/// long as it runs (a large plan's inputs: ``PlannedInputs``; a run's outputs, as its report
/// will tell them: ``ReportedOutputs/Spilling``), read back where they were written. Made on
/// the first write; gone with its last reference, and with the process however it ends (it
/// has no name to leave behind). Where it cannot be made, or a write fails, ``append(_:)``
/// says so and the caller keeps its bytes in memory.
/// Public as the planner's parameter (``JobPlanner/plan(_:manifestPath:defaultTile:reads:sizes:outputLimit:partInputs:spill:runFiles:confinement:stopped:)``);
/// made by ``JobLoader`` and the report's ``ReportedOutputs/Spilling``.
public final class SpillFile: Sendable {
    /// Makes the file: its descriptor, or nil.
    private let make: @Sendable () -> Int32?
    private let state = Mutex<(file: Int32?, length: Int, failed: Bool)>((nil, 0, false))

    /// A file to be made, when first written, in the first of `folders` (that exists) that takes one.
    init(in folders: [String]) {
        make = {
            folders.lazy.compactMap { folder -> Int32? in
                guard let opened = try? Syscalls.openFolder(folder, followingLinks: true) else { return nil }
                defer { Syscalls.close(opened) }
                return try? Syscalls.createUnnamed(in: opened)
            }.first
        }
    }

    /// A file to be made, when first written, in the state folder `state`, made if missing and
    /// refused as ``JobStateFolder/openFolder(_:)`` refuses one.
    init(stateFolder state: String) {
        make = {
            guard let opened = try? JobStateFolder.openFolder(state) else { return nil }
            defer { Syscalls.close(opened) }
            return try? Syscalls.createUnnamed(in: opened)
        }
    }

    deinit { if let file = state.withLock({ $0.file }) { Syscalls.close(file) } }

    /// The folders a plan's file goes in: `preferred` (the state folder, beside the records,
    /// when it exists), then the system's temporary folder.
    static func folders(preferring preferred: String?) -> [String] {
        (preferred.map { [$0] } ?? []) + [ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"]
    }

    /// Writes `bytes` at the end of the file; where they are, or nil when the file cannot be
    /// made or written (then no later write is tried: the caller keeps its bytes).
    func append(_ bytes: [UInt8]) -> Int? {
        state.withLock { state -> Int? in
            guard !state.failed else { return nil }
            if state.file == nil { state.file = make() }
            guard let file = state.file else {
                state.failed = true
                return nil
            }
            do throws(SystemCallError) {
                try Syscalls.writeAll(file, bytes)
            } catch {
                state.failed = true
                return nil
            }
            defer { state.length += bytes.count }
            return state.length
        }
    }

    /// The `count` bytes written at `offset` (``append(_:)``), read back.
    /// - Throws: ``SystemCallError`` when the file cannot be read there.
    func bytes(_ count: Int, at offset: Int) throws(SystemCallError) -> [UInt8] {
        guard let file = state.withLock({ $0.file }) else { throw SystemCallError(call: "pread", errno: EBADF) }
        let bytes = try Syscalls.readBytes(file, count: count, at: offset)
        if bytes.count < count { throw SystemCallError(call: "pread", errno: EIO) }
        return bytes
    }
}
